package moderator

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"interviewd/kv"
)

// mustDraft creates a brief with the built-in engine and fails on any error.
func mustDraft(tb testing.TB, guidance string, files ...FileText) kv.Brief {
	tb.Helper()
	b, err := NewBuiltin().Author(context.Background(), AuthorRequest{Guidance: guidance, Files: files})
	if err != nil {
		tb.Fatalf("Author(%q): %v", guidance, err)
	}
	return b
}

// builtinTextProblem says what is wrong with one string of a brief, or "".
func builtinTextProblem(s string) string {
	switch {
	case s == "":
		return "empty"
	case s != strings.TrimSpace(s):
		return "surrounding whitespace"
	case !utf8.ValidString(s):
		return "invalid UTF-8"
	case utf8.RuneCountInString(s) > 1000:
		return "too long"
	}
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == '\u2028' || r == '\u2029' {
			return "control character"
		}
	}
	return ""
}

// checkBuiltinBrief checks what every brief the built-in engine returns must satisfy;
// created adds the stricter shape of a fresh draft.
func checkBuiltinBrief(tb testing.TB, b kv.Brief, created bool) {
	tb.Helper()
	if b.Title == nil {
		tb.Fatalf("title is nil: %+v", b)
	}
	if b.Objectives == nil || b.PreInterviewQuestions == nil || b.VerbatimQuestions == nil {
		tb.Fatalf("a list is nil: %+v", b)
	}
	if p := builtinTextProblem(*b.Title); p != "" {
		tb.Fatalf("title %q: %s", *b.Title, p)
	}
	for name, list := range map[string][]string{"objective": b.Objectives, "screener": b.PreInterviewQuestions, "verbatim": b.VerbatimQuestions} {
		for _, s := range list {
			if p := builtinTextProblem(s); p != "" {
				tb.Fatalf("%s %q: %s", name, s, p)
			}
		}
	}
	for _, q := range b.VerbatimQuestions {
		if !strings.HasSuffix(q, "?") {
			tb.Fatalf("verbatim question %q does not end in '?'", q)
		}
	}
	if len(b.VerbatimQuestions) < 1 || len(b.Objectives) < 1 {
		tb.Fatalf("brief lost its last question or objective: %+v", b)
	}
	if d := b.EstimatedDurationMinutes; d == nil || *d < 1 || *d > builtinMaxMinutes {
		tb.Fatalf("duration %v out of range", d)
	}
	if !created {
		return
	}
	// Title Case: a capital first, unless the first word is written with inner capitals
	// ("iPhone Habits"), which is kept.
	if r, _ := utf8.DecodeRuneInString(*b.Title); unicode.IsLower(r) && !strings.ContainsFunc(strings.Fields(*b.Title)[0], unicode.IsUpper) {
		tb.Fatalf("title %q is not Title Case", *b.Title)
	}
	if n := utf8.RuneCountInString(*b.Title); n > builtinMaxTitle {
		tb.Fatalf("title %q is %d runes", *b.Title, n)
	}
	if len(b.Objectives) < 2 {
		tb.Fatalf("want at least 2 objectives, got %q", b.Objectives)
	}
	if n := len(b.PreInterviewQuestions); n < 1 || n > 3 {
		tb.Fatalf("want 1 to 3 screener questions, got %q", b.PreInterviewQuestions)
	}
	if len(b.VerbatimQuestions) < 3 {
		tb.Fatalf("want at least 3 verbatim questions, got %q", b.VerbatimQuestions)
	}
}

func TestBuiltinAuthorCreate(t *testing.T) {
	tests := []struct {
		name, guidance string
		title          string   // exact title, when checked
		inQuestions    []string // each must appear in some verbatim question
		inObjectives   []string // each must appear in some objective
		minutes        int      // exact duration, when checked
	}{
		{name: "UnderstandWhy",
			guidance:     "We want to understand why customers cancel their subscriptions after the free trial, and learn what would bring them back.",
			title:        "Why Customers Cancel Their Subscriptions After the Free Trial",
			inQuestions:  []string{"What, if anything, has led you to cancel your subscriptions after the free trial?", "Could you tell me what, if anything, would bring you back?"},
			inObjectives: []string{"Understand why customers cancel their subscriptions after the free trial.", "Learn what would bring customers back.", "unmet needs of customers"}},
		{name: "InterviewAbout",
			guidance:     "Interview nurses about night shifts",
			title:        "Night Shifts Study",
			inQuestions:  []string{"your experience with night shifts?"},
			inObjectives: []string{"Understand the experiences of nurses with night shifts."}},
		{name: "LearnHowWithModifier",
			guidance:    "I'd like to learn how people with diabetes plan their meals.",
			title:       "How People with Diabetes Plan Their Meals",
			inQuestions: []string{"Could you tell me how you plan your meals?"}},
		{name: "WithParticipants",
			guidance:     "Run a study with designers to explore how they hand off work to developers. 30 minute sessions.",
			title:        "How Designers Hand Off Work to Developers",
			inQuestions:  []string{"Could you tell me how you hand off work to developers?"},
			inObjectives: []string{"Explore how designers hand off work to developers.", "unmet needs of designers"},
			minutes:      30},
		{name: "ForParticipants",
			guidance:     "Test our new onboarding flow for first-time users. Keep it to an hour.",
			title:        "Our New Onboarding Flow",
			inObjectives: []string{"first-time users"},
			minutes:      60},
		{name: "FindOutWhat",
			guidance:     "Find out what users think of our new pricing page",
			inQuestions:  []string{"Could you tell me what you think of our new pricing page?", "about our new pricing page?"},
			inObjectives: []string{"Find opportunities to improve our new pricing page."}},
		{name: "TalkToAboutHow",
			guidance:    "Talk to parents about how they choose a school for their children",
			title:       "How Parents Choose a School for Their Children",
			inQuestions: []string{"Could you tell me how you choose a school for your children?", "What, if anything, do you find frustrating about choosing a school?"}},
		{name: "DirectQuestionAndQuoted",
			guidance:    `How do people decide which bank to use? Ask "What made you choose your current bank?"`,
			title:       "How People Decide Which Bank to Use",
			inQuestions: []string{"What made you choose your current bank?", "Could you tell me how you decide which bank to use?"}},
		{name: "CausativeWithAndHow",
			guidance:     "We're launching a meal kit for busy parents. I want to learn what stops them from cooking at home and how they plan dinners.",
			title:        "What Stops Busy Parents from Cooking at Home",
			inQuestions:  []string{"Could you tell me what, if anything, stops you from cooking at home?", "Could you tell me how you plan dinners?", "about cooking at home?"},
			inObjectives: []string{"Learn what stops busy parents from cooking at home.", "Learn how busy parents plan dinners.", "unmet needs of busy parents"}},
		{name: "MakesGroupDo",
			guidance:     "Help me understand what makes freelancers switch invoicing tools",
			inQuestions:  []string{"Could you tell me what, if anything, makes you switch invoicing tools?", "about switching invoicing tools?"},
			inObjectives: []string{"unmet needs of freelancers"}},
		{name: "ExperienceOfGroup",
			guidance:     "Explore the onboarding experience of new hires at our company",
			title:        "The Onboarding Experience of New Hires",
			inQuestions:  []string{"Can you tell me about your onboarding experience?"},
			inObjectives: []string{"Explore the onboarding experience from the point of view of new hires."}},
		{name: "BareTopic",
			guidance: "Customer churn",
			title:    "Customer Churn Study"},
		{name: "NounOnly",
			guidance: "onboarding research",
			title:    "Onboarding Study"},
		{name: "ParticipantsOnly",
			guidance:     "Interview nurses",
			inObjectives: []string{"nurses"}},
		{name: "Long",
			guidance: strings.Repeat("We need to understand how small business owners do their bookkeeping, what tools they use and where they get stuck. ", 40)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustDraft(t, tt.guidance)
			checkBuiltinBrief(t, b, true)
			if tt.title != "" && *b.Title != tt.title {
				t.Errorf("title = %q, want %q", *b.Title, tt.title)
			}
			for _, want := range tt.inQuestions {
				if !containsIn(b.VerbatimQuestions, want) {
					t.Errorf("no verbatim question contains %q: %q", want, b.VerbatimQuestions)
				}
			}
			for _, want := range tt.inObjectives {
				if !containsIn(b.Objectives, want) {
					t.Errorf("no objective contains %q: %q", want, b.Objectives)
				}
			}
			if tt.minutes != 0 && *b.EstimatedDurationMinutes != tt.minutes {
				t.Errorf("duration = %d, want %d", *b.EstimatedDurationMinutes, tt.minutes)
			}
		})
	}
}

func containsIn(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func TestBuiltinAuthorDeterministic(t *testing.T) {
	for _, g := range []string{
		"Understand why customers cancel their subscriptions",
		"Interview nurses about night shifts; make sure we cover breaks",
		"Research on remote work tools for distributed teams",
	} {
		files := []FileText{{Name: "guide.md", Text: "1. What tools do you use today?\n2. Where do you get stuck?\nBudget, tools, budget."}}
		first := mustDraft(t, g, files...)
		for range 3 {
			if again := mustDraft(t, g, files...); !reflect.DeepEqual(first, again) {
				t.Fatalf("same input, different brief:\n%+v\n%+v", first, again)
			}
		}
	}
}

func TestBuiltinAuthorFiles(t *testing.T) {
	guide := FileText{Name: "discussion-guide.md", Text: strings.Join([]string{
		"# Discussion guide: expense tracking",
		"Intro: thank them for their time.",
		"1. How do you currently track business expenses?",
		"- Which tools or spreadsheets do you rely on?",
		"Q3: What happens at the end of the month?",
		"Warm-up. Can you describe a typical week?",
		"What is your password?",
		"Why?",
		"Receipts, receipts and more receipts: reconciliation pain, receipts.",
	}, "\n")}
	t.Run("QuestionsTakenWordForWord", func(t *testing.T) {
		b := mustDraft(t, "Interview freelancers about expenses using the attached guide", guide)
		checkBuiltinBrief(t, b, true)
		want := []string{
			"How do you currently track business expenses?",
			"Which tools or spreadsheets do you rely on?",
			"What happens at the end of the month?",
			"Can you describe a typical week?",
		}
		if len(b.VerbatimQuestions) < len(want) || !reflect.DeepEqual(b.VerbatimQuestions[:len(want)], want) {
			t.Fatalf("verbatim questions = %q, want the file's questions first: %q", b.VerbatimQuestions, want)
		}
		for _, q := range b.VerbatimQuestions {
			if strings.Contains(strings.ToLower(q), "password") || q == "Why?" {
				t.Errorf("took %q from the file", q)
			}
		}
		if !containsIn(b.Objectives, "receipts") {
			t.Errorf("objectives miss the file's key term: %q", b.Objectives)
		}
	})
	t.Run("FileOnlyGuidance", func(t *testing.T) {
		b := mustDraft(t, "Draft a study from the attached notes", guide)
		checkBuiltinBrief(t, b, true)
		if b.VerbatimQuestions[0] != "How do you currently track business expenses?" {
			t.Errorf("first question = %q", b.VerbatimQuestions[0])
		}
	})
	t.Run("HugeFile", func(t *testing.T) {
		big := FileText{Name: "big.txt", Text: strings.Repeat("lorem ipsum dolor sit amet\n", 100000) + "What do you think of the ending?\n"}
		b := mustDraft(t, "Interview readers about our novel", big)
		checkBuiltinBrief(t, b, true)
		if containsIn(b.VerbatimQuestions, "ending") {
			t.Errorf("read past the scan limit: %q", b.VerbatimQuestions)
		}
	})
}

func TestBuiltinAuthorContextDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewBuiltin().Author(ctx, AuthorRequest{Guidance: "Interview nurses about night shifts"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func BenchmarkBuiltinAuthor(b *testing.B) {
	files := []FileText{{Name: "guide.md", Text: strings.Repeat("How do you currently track business expenses?\nReceipts and reconciliation notes.\n", 20)}}
	type benchCase struct {
		name string
		req  AuthorRequest
	}
	cases := []benchCase{
		{name: "Create", req: AuthorRequest{Guidance: "We want to understand why customers cancel their subscriptions after the free trial, and learn what would bring them back. Interview people who cancelled in the last 3 months."}},
		{name: "CreateWithFile", req: AuthorRequest{Guidance: "Interview freelancers about expenses using the attached guide", Files: files}},
	}
	// The longest guidance the API accepts, written to make phrase readers backtrack:
	// intent verbs, markers and joiners everywhere, no sentence end.
	worst := strings.Repeat("learn why customers with for and how interview people about see how they, ", 300)[:20000]
	cases = append(cases, benchCase{name: "CreateLongest", req: AuthorRequest{Guidance: worst}})
	cur := mustDraft(b, "Interview nurses about night shifts")
	refineWorst := strings.Repeat("add a question about pricing and ", 700)[:20000]
	cases = append(cases, benchCase{name: "RefineLongest", req: AuthorRequest{Guidance: refineWorst, Current: &cur}})
	cases = append(cases, benchCase{name: "Refine", req: AuthorRequest{Guidance: "Add a question about pricing and remove question 2. Then make it 15 minutes", Current: &cur}})
	m := NewBuiltin()
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Author(context.Background(), c.req); err != nil && !errors.Is(err, ErrRefused) {
					b.Fatal(err)
				}
			}
		})
	}
}
