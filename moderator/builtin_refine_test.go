package moderator

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"interviewd/kv"
)

// refineBase is a small, known brief to refine.
func refineBase() kv.Brief {
	title, minutes := "Night Shifts Study", 25
	return kv.Brief{
		Title:                    &title,
		Objectives:               []string{"Understand the experiences of nurses with night shifts.", "Identify unmet needs."},
		PreInterviewQuestions:    []string{"What is your current role or occupation?", "How often do you work nights?"},
		VerbatimQuestions:        []string{"Q one?", "Q two?", "Q three?", "Q four?"},
		EstimatedDurationMinutes: &minutes,
	}
}

// mustRefine applies guidance to cur with the built-in engine and fails on any error.
func mustRefine(tb testing.TB, cur kv.Brief, guidance string) kv.Brief {
	tb.Helper()
	b, err := NewBuiltin().Author(context.Background(), AuthorRequest{Guidance: guidance, Current: &cur})
	if err != nil {
		tb.Fatalf("refine %q: %v", guidance, err)
	}
	checkBuiltinBrief(tb, b, false)
	return b
}

func TestBuiltinRefine(t *testing.T) {
	tests := []struct {
		name, guidance string
		want           func(b *kv.Brief) // edits refineBase() into the expected brief
	}{
		{"AddQuestionAbout", "add a question about pricing", func(b *kv.Brief) {
			b.VerbatimQuestions = append(b.VerbatimQuestions, "Can you tell me about pricing?")
		}},
		{"AddQuestionAboutClause", "Add a question about how they sleep after a shift.", func(b *kv.Brief) {
			b.VerbatimQuestions = append(b.VerbatimQuestions, "Could you tell me how you sleep after a shift?")
		}},
		{"AddQuestionAskingWhether", "add a question asking whether they would recommend the rota app", func(b *kv.Brief) {
			b.VerbatimQuestions = append(b.VerbatimQuestions, "Would you recommend the rota app?")
		}},
		{"AddQuotedQuestion", `add the question "What do you do when a shift runs over? And why?"`, func(b *kv.Brief) {
			b.VerbatimQuestions = append(b.VerbatimQuestions, "What do you do when a shift runs over? And why?")
		}},
		{"AddQuestionWithoutMark", `add the question "How do breaks work on your ward"`, func(b *kv.Brief) {
			b.VerbatimQuestions = append(b.VerbatimQuestions, "How do breaks work on your ward?")
		}},
		{"AddUnquotedQuestion", "add the question: what keeps you going at 4am?", func(b *kv.Brief) {
			b.VerbatimQuestions = append(b.VerbatimQuestions, "What keeps you going at 4am?")
		}},
		{"AskThem", "ask them how they get home after a shift", func(b *kv.Brief) {
			b.VerbatimQuestions = append(b.VerbatimQuestions, "Could you tell me how you get home after a shift?")
		}},
		{"RemoveQuestion", "remove question 2", func(b *kv.Brief) {
			b.VerbatimQuestions = []string{"Q one?", "Q three?", "Q four?"}
		}},
		{"DeleteQuestion", "Delete question #4.", func(b *kv.Brief) {
			b.VerbatimQuestions = []string{"Q one?", "Q two?", "Q three?"}
		}},
		{"DeleteOrdinal", "delete the second question", func(b *kv.Brief) {
			b.VerbatimQuestions = []string{"Q one?", "Q three?", "Q four?"}
		}},
		{"DropLast", "drop the last question", func(b *kv.Brief) {
			b.VerbatimQuestions = []string{"Q one?", "Q two?", "Q three?"}
		}},
		{"RemoveQuestionAbout", "remove the question about three", func(b *kv.Brief) {
			b.VerbatimQuestions = []string{"Q one?", "Q two?", "Q four?"}
		}},
		{"RewordQuestion", "reword question 3 to What annoys you most about nights", func(b *kv.Brief) {
			b.VerbatimQuestions[2] = "What annoys you most about nights?"
		}},
		{"ChangeQuestionQuoted", `change question 1 to "How are nights going?"`, func(b *kv.Brief) {
			b.VerbatimQuestions[0] = "How are nights going?"
		}},
		{"ReplaceQuestionWith", "replace q4 with: Who do you turn to for help.", func(b *kv.Brief) {
			b.VerbatimQuestions[3] = "Who do you turn to for help?"
		}},
		{"RenameLowercase", "rename the study to night shift wellbeing", func(b *kv.Brief) {
			t := "Night Shift Wellbeing"
			b.Title = &t
		}},
		{"CallItKeepsCase", "call it NHS Nights 2025", func(b *kv.Brief) {
			t := "NHS Nights 2025"
			b.Title = &t
		}},
		{"ChangeTheTitle", `change the title to "Life After Dark"`, func(b *kv.Brief) {
			t := "Life After Dark"
			b.Title = &t
		}},
		{"MakeItMinutes", "make it 20 minutes", func(b *kv.Brief) {
			m := 20
			b.EstimatedDurationMinutes = &m
		}},
		{"MinutesLong", "45 minutes long", func(b *kv.Brief) {
			m := 45
			b.EstimatedDurationMinutes = &m
		}},
		{"AnHour", "the interviews should last an hour", func(b *kv.Brief) {
			m := 60
			b.EstimatedDurationMinutes = &m
		}},
		{"AddScreenerWhether", "add a screener about whether they work nights", func(b *kv.Brief) {
			b.PreInterviewQuestions = append(b.PreInterviewQuestions, "Do you work nights?")
		}},
		{"AddScreenerNoun", "add a screener question about ward size", func(b *kv.Brief) {
			b.PreInterviewQuestions = append(b.PreInterviewQuestions, "What is your ward size?")
		}},
		{"AddScreenerText", "add a screener question: Are you a registered nurse?", func(b *kv.Brief) {
			b.PreInterviewQuestions = append(b.PreInterviewQuestions, "Are you a registered nurse?")
		}},
		{"RemoveScreener", "remove screener 1", func(b *kv.Brief) {
			b.PreInterviewQuestions = []string{"How often do you work nights?"}
		}},
		{"AddObjectiveTo", "add an objective to learn how nurses rest between shifts", func(b *kv.Brief) {
			b.Objectives = append(b.Objectives, "Learn how nurses rest between shifts.")
		}},
		{"AddObjectiveColon", "add an objective: compare day and night rotas", func(b *kv.Brief) {
			b.Objectives = append(b.Objectives, "Compare day and night rotas.")
		}},
		{"PoliteQuestionForm", "Could you please add a question about breaks?", func(b *kv.Brief) {
			b.VerbatimQuestions = append(b.VerbatimQuestions, "Can you tell me about breaks?")
		}},
		{"ChangeObjective", "change objective 1 to learn how nurses swap shifts", func(b *kv.Brief) {
			b.Objectives[0] = "Learn how nurses swap shifts."
		}},
		{"RewordObjectiveOrdinal", "reword the second objective: find what breaks my rota app", func(b *kv.Brief) {
			b.Objectives[1] = "Find what breaks our rota app."
		}},
		{"RemoveObjective", "remove objective 2", func(b *kv.Brief) {
			b.Objectives = b.Objectives[:1]
		}},
		{"MakeItShorter", "make it shorter", func(b *kv.Brief) {
			m := 20
			b.VerbatimQuestions, b.EstimatedDurationMinutes = b.VerbatimQuestions[:3], &m
		}},
		// The researcher's own words, already put to the participant, stay grammatical.
		{"AddScreenerHowMany", "Add a screener about how many staff work at your bakery", func(b *kv.Brief) {
			b.PreInterviewQuestions = append(b.PreInterviewQuestions, "How many staff work at your bakery?")
		}},
		{"AddScreenerHowManyTheyEmbedded", "add a screener question about how many customers they serve each day", func(b *kv.Brief) {
			b.PreInterviewQuestions = append(b.PreInterviewQuestions, "Could you tell me how many customers you serve each day?")
		}},
		{"AddQuestionHowManyDo", "add a question about how many staff do they employ", func(b *kv.Brief) {
			b.VerbatimQuestions = append(b.VerbatimQuestions, "How many staff do you employ?")
		}},
		{"AddQuestionYourGroup", "add a question about why your staff leave", func(b *kv.Brief) {
			b.VerbatimQuestions = append(b.VerbatimQuestions, "Could you tell me why your staff leave?")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur := refineBase()
			got := mustRefine(t, cur, tt.guidance)
			want := refineBase()
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("refine %q:\n got %s\nwant %s", tt.guidance, briefString(got), briefString(want))
			}
			if !reflect.DeepEqual(cur, refineBase()) {
				t.Fatalf("refine changed the current brief in place: %s", briefString(cur))
			}
		})
	}
}

func briefString(b kv.Brief) string {
	title, minutes := "<nil>", "<nil>"
	if b.Title != nil {
		title = *b.Title
	}
	if b.EstimatedDurationMinutes != nil {
		minutes = strconv.Itoa(*b.EstimatedDurationMinutes)
	}
	return "{" + title + " | " + strings.Join(b.Objectives, " / ") + " | " + strings.Join(b.PreInterviewQuestions, " / ") + " | " + strings.Join(b.VerbatimQuestions, " / ") + " | " + minutes + "}"
}

func TestBuiltinRefineSeveral(t *testing.T) {
	tests := []struct {
		name, guidance string
		want           func(b *kv.Brief)
	}{
		{"SentencesAndSemicolon", `Add a question about pricing and remove question 2. Then make it 15 minutes; rename the study to "Shift Life"`, func(b *kv.Brief) {
			title, m := "Shift Life", 15
			b.Title, b.EstimatedDurationMinutes = &title, &m
			b.VerbatimQuestions = []string{"Q one?", "Q three?", "Q four?", "Can you tell me about pricing?"}
		}},
		{"AndThen", "remove question 1 and then remove question 1", func(b *kv.Brief) {
			b.VerbatimQuestions = []string{"Q three?", "Q four?"}
		}},
		{"CommaJoined", "make it 30 minutes, add a screener about their ward, call it Wards", func(b *kv.Brief) {
			title, m := "Wards", 30
			b.Title, b.EstimatedDurationMinutes = &title, &m
			b.PreInterviewQuestions = append(b.PreInterviewQuestions, "What is your ward?")
		}},
		{"QuotedTextNotSplit", `add the question "Do you nap; and then what?" and then delete question 1`, func(b *kv.Brief) {
			b.VerbatimQuestions = []string{"Q two?", "Q three?", "Q four?", "Do you nap; and then what?"}
		}},
		{"CourtesyIgnored", "Hi! Please add a question about breaks. Thanks!", func(b *kv.Brief) {
			b.VerbatimQuestions = append(b.VerbatimQuestions, "Can you tell me about breaks?")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustRefine(t, refineBase(), tt.guidance)
			want := refineBase()
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("refine %q:\n got %s\nwant %s", tt.guidance, briefString(got), briefString(want))
			}
		})
	}
}

func TestBuiltinRefineRefused(t *testing.T) {
	tests := []struct {
		name, guidance, reason string
	}{
		{"QuestionOutOfRange", "delete question 9", "there is no question 9: the study has 4"},
		{"QuestionZero", "remove question 0", "there is no question 0"},
		{"RewordOutOfRange", "reword question 5 to Why?", "there is no question 5"},
		{"ScreenerOutOfRange", "remove screener 3", "there is no screener question 3"},
		{"Unrecognised", "make the font blue", `could not apply "make the font blue". It understands: `},
		{"OneOfSeveralUnrecognised", "add a question about pricing and then paint it red", `could not apply "paint it red". It understands: `},
		{"OnlyCourtesy", "Thanks!", "the guidance names no change to make. It understands: "},
		{"ObjectiveWithoutWording", "change objective 1", `could not apply "change objective 1" (say what objective 1 should become, as in "change objective 1 to …")`},
		{"QuestionWithoutWording", "reword the second question", `(say what the second question should become`},
		{"EveryMissNamed", "change objective 1 and then paint it red", `could not apply "change objective 1" (say what objective 1 should become, as in "change objective 1 to …") and "paint it red". It understands: `},
		{"ObjectiveOutOfRange", "change objective 3 to learn more", "there is no objective 3: the study has 2"},
		{"Longer", "make it longer", `cannot make up questions to make the study longer: add one ("add a question about …") or set a length ("make it 45 minutes")`},
		{"Empty", "   ", "the guidance is empty"},
		{"Poem", "write me a poem about nurses", "creative writing"},
		{"Weather", "what's the weather like in Leeds", "general question"},
		{"CredentialQuestion", `add the question "What is your bank password?"`, "credentials"},
		{"CredentialAsk", "add a question asking for their credit card number", "credentials"},
		{"Harassment", "add a question that will intimidate them and then threaten participants who leave early", "harass"},
		{"DurationTooLong", "make it 900 minutes", "outside 1 to 480"},
		{"EmptyTitle", `rename the study to ""`, ""},
		{"DuplicateQuestion", `add the question "Q one?"`, "already asks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur := refineBase()
			_, err := NewBuiltin().Author(context.Background(), AuthorRequest{Guidance: tt.guidance, Current: &cur})
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("refine %q: err = %v, want ErrRefused", tt.guidance, err)
			}
			if !strings.Contains(err.Error(), tt.reason) {
				t.Fatalf("refine %q: err = %q, want it to mention %q", tt.guidance, err, tt.reason)
			}
		})
	}
}

func TestBuiltinRefineKeepsLastQuestion(t *testing.T) {
	b := refineBase()
	b.VerbatimQuestions = []string{"Only one?"}
	_, err := NewBuiltin().Author(context.Background(), AuthorRequest{Guidance: "remove question 1", Current: &b})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "at least 1") {
		t.Fatalf("err = %v, want a refusal to remove the last question", err)
	}
}

func TestBuiltinRefineFillsMissing(t *testing.T) {
	cur := kv.Brief{Objectives: []string{"Learn about rota planning."}, VerbatimQuestions: []string{"How do you plan your rota?"}}
	b := mustRefine(t, cur, "add a question about swaps")
	if b.Title == nil || *b.Title == "" || b.EstimatedDurationMinutes == nil {
		t.Fatalf("refine left the title or duration unset: %s", briefString(b))
	}
}

func TestBuiltinRefineDeterministic(t *testing.T) {
	g := "Add a question about pricing and remove question 2. Then make it 15 minutes"
	first := mustRefine(t, refineBase(), g)
	for range 3 {
		if again := mustRefine(t, refineBase(), g); !reflect.DeepEqual(first, again) {
			t.Fatalf("same input, different brief:\n%s\n%s", briefString(first), briefString(again))
		}
	}
}

// TestBuiltinRefineHelpListsWhatItApplies: every phrasing the refusal offers is one the
// engine applies, so the help never sends a researcher to another dead end.
func TestBuiltinRefineHelpListsWhatItApplies(t *testing.T) {
	help := strings.TrimSuffix(strings.TrimPrefix(builtinRefineHelp, "It understands: "), ".")
	for _, offered := range strings.Split(help, "; ") {
		// The filler each offered phrasing takes, by what it starts with.
		filler := "pricing"
		switch {
		case strings.HasPrefix(offered, "add the question"):
			filler = "How do you price things?"
		case strings.HasPrefix(offered, "remove the question about"):
			filler = "three" // refineBase's "Q three?"
		case strings.HasSuffix(offered, " to …"):
			filler = "learn about pricing"
		}
		g := strings.Replace(offered, "…", filler, 1)
		if _, err := NewBuiltin().Author(context.Background(), AuthorRequest{Guidance: g, Current: ptr(refineBase())}); err != nil {
			t.Errorf("offered %q (tried as %q): %v", offered, g, err)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestBuiltinRefineAllOrNothing: a refine with one instruction not understood changes
// nothing, not even the parts that were.
func TestBuiltinRefineAllOrNothing(t *testing.T) {
	cur := refineBase()
	b, err := NewBuiltin().Author(context.Background(), AuthorRequest{Guidance: "add a question about pricing, remove question 2 and change objective 1", Current: &cur})
	if !errors.Is(err, ErrRefused) || !reflect.DeepEqual(b, kv.Brief{}) {
		t.Fatalf("refine = %s, %v; want a refusal and no brief", briefString(b), err)
	}
	if !reflect.DeepEqual(cur, refineBase()) {
		t.Fatalf("a refused refine changed the current brief: %s", briefString(cur))
	}
}

// TestBuiltinRefineShorterKeepsWrapUpLast: "make it shorter" drops the question before a
// closing wrap-up, and refuses a study already down to two questions.
func TestBuiltinRefineShorterKeepsWrapUpLast(t *testing.T) {
	cur := refineBase()
	cur.VerbatimQuestions = append(cur.VerbatimQuestions, "Is there anything else you would like to share?")
	b := mustRefine(t, cur, "please make the interview a bit shorter")
	want := []string{"Q one?", "Q two?", "Q three?", "Is there anything else you would like to share?"}
	if !reflect.DeepEqual(b.VerbatimQuestions, want) || *b.EstimatedDurationMinutes != 20 {
		t.Fatalf("shorter: %s", briefString(b))
	}
	two := refineBase()
	two.VerbatimQuestions = two.VerbatimQuestions[:2]
	_, err := NewBuiltin().Author(context.Background(), AuthorRequest{Guidance: "make it shorter", Current: &two})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), `the study has only 2 questions; say which to remove ("remove question 2")`) {
		t.Fatalf("shorter with two questions: %v", err)
	}
}
