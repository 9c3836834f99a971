package jobs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/rs/zerolog"

	"interviewd/analysis"
	"interviewd/kv"
	"interviewd/moderator"
)

const analysisEmail = "jane.doe@example.com"

// analysisBrief is a design with an objective, a screener and two verbatim questions.
func analysisBrief(title string) kv.Brief {
	return kv.Brief{Title: &title, Objectives: []string{"Understand how teams schedule their shifts"},
		PreInterviewQuestions: []string{"How many people are on your team?"},
		VerbatimQuestions:     []string{"How do you schedule shifts today?", "What goes wrong with the schedule?"}}
}

// completeLive records one interview of st through its link, answering each question
// in turn, completed when complete is set.
func completeLive(tb testing.TB, db *kv.DB, st kv.Study, session string, questions, answers []string, complete bool) kv.Interview {
	tb.Helper()
	ctx := context.Background()
	opened, err := db.OpenLink(ctx, st.LinkToken, session)
	if err != nil || opened.Interview == nil {
		tb.Fatalf("open link: %+v %v", opened, err)
	}
	at := opened.Interview.StartedAt
	var msgs []kv.Message
	for i, q := range questions {
		msgs = append(msgs, kv.Message{Speaker: kv.SpeakerInterviewer, Text: q, At: at},
			kv.Message{Speaker: kv.SpeakerParticipant, Text: answers[i%len(answers)], At: at.Add(20 * time.Second)})
		at = at.Add(time.Minute)
	}
	status := kv.InterviewInProgress
	if complete {
		status = kv.InterviewCompleted
	}
	iv, err := db.AppendTurn(ctx, st.Partition(), opened.Interview.ID, kv.Turn{Session: session, Messages: msgs, Status: status})
	if err != nil {
		tb.Fatal(err)
	}
	return iv
}

func waitAnalysis(t *testing.T, db *kv.DB, p kv.Partition, id kv.ID) kv.Job {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		j, err := db.FindJobByID(context.Background(), p, kv.JobAnalysis, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Done {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("analysis %s not done after 2 minutes: %+v", id, j)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func decodeAnalysis(t *testing.T, v kv.AnalysisVersion) analysis.Analysis {
	t.Helper()
	var a analysis.Analysis
	if err := json.Unmarshal(v.Body, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// allQuotes returns every quote of a.
func allQuotes(a analysis.Analysis) []analysis.Quote {
	var out []analysis.Quote
	for _, o := range a.Objectives {
		for _, f := range o.Findings {
			out = append(append(out, f.Support...), f.Contrary...)
		}
	}
	for _, th := range a.Themes {
		out = append(out, th.Quotes...)
	}
	for _, q := range a.Questions {
		for _, g := range q.Groups {
			out = append(out, g.Quotes...)
		}
	}
	for _, s := range a.Suggestions {
		out = append(out, s.Quotes...)
	}
	return out
}

func startAnalysis(t *testing.T, r *Runner, db *kv.DB, p kv.Partition, st kv.Study) kv.Job {
	t.Helper()
	j, _, err := db.CreateAnalysisJob(context.Background(), kv.AnalysisInput{Partition: p, JobID: kv.NewV4(), StudyID: st.ID, Limit: r.AnalysisLimit()})
	if err != nil {
		t.Fatal(err)
	}
	r.Enqueue(j)
	return j
}

// TestAnalysisJob runs the built-in engine over a live study's interviews through the
// real redactor: only completed live interviews count, quotes are exact spans of the
// redacted messages, and the design of every version the interviews used is read.
func TestAnalysisJob(t *testing.T) {
	db := mustOpenDB(t, t.TempDir())
	defer db.Close()
	ctx := context.Background()
	org, _, err := db.CreateOrg(ctx, kv.OrgInput{Name: "Analyse", Email: "an@example.com", Credits: 20})
	if err != nil {
		t.Fatal(err)
	}
	p := kv.Partition{Org: org.ID, Env: kv.EnvLive}
	brief := analysisBrief("Shifts")
	st, err := db.CreateStudy(ctx, kv.StudyInput{Partition: p, Brief: brief})
	if err != nil {
		t.Fatal(err)
	}
	questions := append(append([]string{}, brief.PreInterviewQuestions...), brief.VerbatimQuestions...)
	answers := []string{
		"Five of us, and the team lead mails " + analysisEmail + " to schedule shifts every Friday.",
		"We schedule shifts in a spreadsheet that " + analysisEmail + " keeps, and the teams swap by phone.",
		"Shifts clash when the schedule changes late; " + analysisEmail + " never hears about swaps.",
	}
	completeLive(t, db, st, "rehearsal", questions, []string{"REHEARSAL-ONLY words about shifts"}, true)
	if _, err := db.SetStudyMode(ctx, p, st.ID, kv.ModeLive); err != nil {
		t.Fatal(err)
	}
	r := NewRunner(Config{DB: db, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Plugins: mustPlugins(t)})
	defer r.Close(ctx)

	t.Run("OK_EmptyStudyEveryObjectiveAGap", func(t *testing.T) {
		j := waitAnalysis(t, db, p, startAnalysis(t, r, db, p, st).ID)
		if j.Status != kv.AnalysisCompleted {
			t.Fatalf("job %+v", j)
		}
		v, err := db.FindAnalysis(ctx, p, st.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		a := decodeAnalysis(t, v)
		if a.Version != 1 || a.InterviewsIncluded != 0 || len(a.Objectives) != 1 || !a.Objectives[0].Gap || len(a.Questions) != 3 ||
			a.Engine != "builtin" || a.StudyID != st.ID.String() || a.GeneratedAt.IsZero() || len(allQuotes(a)) != 0 {
			t.Fatalf("empty analysis %s", v.Body)
		}
		if a.Questions[0].Kind != analysis.QuestionScreener || a.Questions[1].Kind != analysis.QuestionVerbatim {
			t.Fatalf("question kinds %+v", a.Questions)
		}
	})

	// Two completed live interviews on design version 1; the design is refined; a third
	// on version 2; one in progress.
	ivs := []kv.Interview{
		completeLive(t, db, st, "p1", questions, answers, true),
		completeLive(t, db, st, "p2", questions, answers[1:], true),
	}
	refined := analysisBrief("Shifts")
	refined.Objectives = append(refined.Objectives, "Learn which tools teams already pay for")
	refined.VerbatimQuestions = append(refined.VerbatimQuestions, "Which tools do you pay for?")
	aj, err := db.CreateAuthoringJob(ctx, kv.AuthoringInput{Partition: p, JobID: kv.NewV4(), StudyID: &st.ID, Guidance: "add tools"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.FinishAuthoring(ctx, p, aj.ID, refined); err != nil {
		t.Fatal(err)
	}
	q2 := append(append([]string{}, refined.PreInterviewQuestions...), refined.VerbatimQuestions...)
	ivs = append(ivs, completeLive(t, db, st, "p3", q2, answers[2:], true))
	completeLive(t, db, st, "p4", questions, answers, false)

	j := waitAnalysis(t, db, p, startAnalysis(t, r, db, p, st).ID)
	if j.Status != kv.AnalysisCompleted {
		t.Fatalf("job %+v", j)
	}
	if o, ok := j.AnalysisOutcome(); !ok || o.Version != 2 {
		t.Fatalf("outcome %+v", j)
	}
	v, err := db.FindAnalysis(ctx, p, st.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	a := decodeAnalysis(t, v)
	if a.Version != 2 || a.InterviewsIncluded != 3 || len(v.Sources) != 3 {
		t.Fatalf("version %d, %d interviews, %d sources", a.Version, a.InterviewsIncluded, len(v.Sources))
	}
	if len(a.Objectives) != 2 || a.Objectives[1].Objective != "Learn which tools teams already pay for" || len(a.Questions) != 4 {
		t.Fatalf("the design of both versions is not read: %+v %+v", a.Objectives, a.Questions)
	}
	body := string(v.Body)
	for _, leak := range []string{analysisEmail, "REHEARSAL-ONLY"} {
		if strings.Contains(body, leak) {
			t.Fatalf("the analysis holds %q: %s", leak, body)
		}
	}
	quotes := allQuotes(a)
	if len(quotes) == 0 {
		t.Fatalf("no quotes: %s", body)
	}
	redacted := 0
	for _, q := range quotes {
		id, _ := kv.ParseID(q.InterviewID)
		msgs, err := db.FindTranscript(ctx, p, id)
		if err != nil {
			t.Fatal(err)
		}
		m := msgs[q.MessageIndex]
		if m.Speaker != kv.SpeakerParticipant || !strings.Contains(strings.ReplaceAll(m.Text, analysisEmail, "[EMAIL]"), q.Text) {
			t.Fatalf("quote %+v is not a span of the redacted message %q", q, m.Text)
		}
		if strings.Contains(q.Text, "[EMAIL]") {
			redacted++
		}
	}
	if redacted == 0 {
		t.Fatalf("no quote shows the redacted email: %+v", quotes)
	}
	for _, src := range v.Sources {
		if src.InterviewID != ivs[0].ID && src.InterviewID != ivs[1].ID && src.InterviewID != ivs[2].ID {
			t.Fatalf("source %s is not a completed live interview", src.InterviewID)
		}
		if len(src.Answered) == 0 {
			t.Fatalf("source %+v answered nothing", src)
		}
	}
	// Every count an erasure may subtract from is recorded, interview by interview.
	if !v.Counted {
		t.Fatal("the version's sources do not say which counts they are in")
	}
	for oi, o := range a.Objectives {
		n := 0
		for _, src := range v.Sources {
			if slices.Contains(src.Objectives, oi) {
				n++
			}
		}
		if n != o.Coverage.Interviews {
			t.Errorf("objective %d: %d sources name it, coverage %d", oi, n, o.Coverage.Interviews)
		}
	}
	groups := 0
	for qi, q := range a.Questions {
		for _, g := range q.Groups {
			groups++
			n := 0
			for _, src := range v.Sources {
				if slices.Contains(src.Groups, kv.AnalysisGroupRef{Question: qi, Label: g.Label}) {
					n++
				}
			}
			if n != g.Count {
				t.Errorf("question %d group %q: %d sources name it, count %d", qi, g.Label, n, g.Count)
			}
		}
	}
	if groups == 0 {
		t.Fatal("no answer groups to check")
	}
	// The first version is still there, unchanged.
	if v1, err := db.FindAnalysis(ctx, p, st.ID, 1); err != nil || decodeAnalysis(t, v1).InterviewsIncluded != 0 {
		t.Fatalf("version 1 %+v %v", v1, err)
	}
}

// TestAnalysisResumedAfterCrash: a job a dead process left running is run again by the
// next start and stores its version.
func TestAnalysisResumedAfterCrash(t *testing.T) {
	db := mustOpenDB(t, t.TempDir())
	defer db.Close()
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, kv.OrgInput{Name: "Crash", Email: "c@example.com", Credits: 5})
	p := kv.Partition{Org: org.ID, Env: kv.EnvLive}
	brief := analysisBrief("Crash")
	st, _ := db.CreateStudy(ctx, kv.StudyInput{Partition: p, Brief: brief})
	if _, err := db.SetStudyMode(ctx, p, st.ID, kv.ModeLive); err != nil {
		t.Fatal(err)
	}
	completeLive(t, db, st, "c1", brief.VerbatimQuestions, []string{"We schedule shifts on paper."}, true)
	j, _, err := db.CreateAnalysisJob(ctx, kv.AnalysisInput{Partition: p, JobID: kv.NewV4(), StudyID: st.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ClaimJob(ctx, p, j.ID, "dead-node", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := db.StartAnalysis(ctx, p, j.ID); err != nil {
		t.Fatal(err)
	}
	r := NewRunner(Config{DB: db, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Plugins: mustPlugins(t)})
	defer r.Close(ctx)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	done := waitAnalysis(t, db, p, j.ID)
	if o, ok := done.AnalysisOutcome(); !ok || o.Version != 1 || done.Attempts != 2 {
		t.Fatalf("resumed job %+v", done)
	}
	if v, err := db.FindAnalysis(ctx, p, st.ID, 0); err != nil || v.JobID != j.ID || len(v.Sources) != 1 {
		t.Fatalf("version %+v %v", v, err)
	}
}

// TestAnalysisAfterCompletedInterview: completed live interviews ask for one analysis
// of their study after the delay; rehearsals and test-environment interviews do not.
func TestAnalysisAfterCompletedInterview(t *testing.T) {
	db := mustOpenDB(t, t.TempDir())
	defer db.Close()
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, kv.OrgInput{Name: "Auto", Email: "auto@example.com", Credits: 20})
	p := kv.Partition{Org: org.ID, Env: kv.EnvLive}
	brief := analysisBrief("Auto")
	st, _ := db.CreateStudy(ctx, kv.StudyInput{Partition: p, Brief: brief})
	rehearsal := completeLive(t, db, st, "r", brief.VerbatimQuestions, []string{"rehearsing"}, true)
	if _, err := db.SetStudyMode(ctx, p, st.ID, kv.ModeLive); err != nil {
		t.Fatal(err)
	}
	var live []kv.Interview
	for i := range 4 {
		live = append(live, completeLive(t, db, st, fmt.Sprint("l", i), brief.VerbatimQuestions, []string{"We schedule shifts on paper."}, true))
	}
	inTest := live[0]
	inTest.Env = kv.EnvTest
	ref := studyRef{p: p, study: st.ID}

	t.Run("OK_OnePendingPerStudy", func(t *testing.T) {
		// A delay no test outlasts: only the pending requests are looked at.
		r := NewRunner(Config{DB: db, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Plugins: mustPlugins(t), AnalysisDelay: time.Hour})
		r.InterviewCompleted(rehearsal)
		r.InterviewCompleted(inTest)
		inProgress := live[1]
		inProgress.Status = kv.InterviewInProgress
		r.InterviewCompleted(inProgress)
		if n := r.PendingAnalyses(); n != 0 {
			t.Fatalf("%d analyses pending for interviews that are not completed live ones", n)
		}
		for _, iv := range live {
			r.InterviewCompleted(iv)
		}
		if n := r.PendingAnalyses(); n != 1 {
			t.Fatalf("%d analyses pending for one study, want 1", n)
		}
		if err := r.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if n := r.PendingAnalyses(); n != 0 {
			t.Fatalf("%d analyses still pending after Close", n)
		}
		r.InterviewCompleted(live[0])
		if n := r.PendingAnalyses(); n != 0 {
			t.Fatal("an analysis was asked for after Close")
		}
	})
	t.Run("OK_WhileRunningAskedAgain", func(t *testing.T) {
		r := NewRunner(Config{DB: db, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Plugins: mustPlugins(t), AnalysisDelay: time.Hour})
		defer r.Close(ctx)
		// A job already running may have read the interviews before this one: the
		// request waits for another delay rather than being lost.
		held, _, err := db.CreateAnalysisJob(ctx, kv.AnalysisInput{Partition: p, JobID: kv.NewV4(), StudyID: st.ID})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.StartAnalysis(ctx, p, held.ID); err != nil {
			t.Fatal(err)
		}
		r.analyseNow(ref)
		if n := r.PendingAnalyses(); n != 1 {
			t.Fatalf("%d pending while the study's analysis runs, want 1", n)
		}
		if err := db.FailJob(ctx, p, held.ID, kv.AnalysisFailed, "stopped by the test"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("OK_LimitWaits", func(t *testing.T) {
		r := NewRunner(Config{DB: db, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Plugins: mustPlugins(t), AnalysisDelay: time.Hour, AnalysisLimit: 1})
		defer r.Close(ctx)
		other, _ := db.CreateStudy(ctx, kv.StudyInput{Partition: p, Brief: brief})
		if _, err := db.SetStudyMode(ctx, p, other.ID, kv.ModeLive); err != nil {
			t.Fatal(err)
		}
		held, _, err := db.CreateAnalysisJob(ctx, kv.AnalysisInput{Partition: p, JobID: kv.NewV4(), StudyID: other.ID})
		if err != nil {
			t.Fatal(err)
		}
		r.analyseNow(ref)
		if n := r.PendingAnalyses(); n != 1 {
			t.Fatalf("%d pending at the organisation's limit, want 1", n)
		}
		if err := db.FailJob(ctx, p, held.ID, kv.AnalysisFailed, "stopped by the test"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("OK_DelayPassesOneAnalysis", func(t *testing.T) {
		r := NewRunner(Config{DB: db, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Plugins: mustPlugins(t), AnalysisDelay: 20 * time.Millisecond})
		defer r.Close(ctx)
		before, _ := db.FindAnalysisVersions(ctx, p, st.ID)
		for _, iv := range live {
			r.InterviewCompleted(iv)
		}
		waitFor(t, "the analysis after the interviews", func() bool {
			v, err := db.FindAnalysis(ctx, p, st.ID, 0)
			return err == nil && v.Version > len(before)
		})
		v, _ := db.FindAnalysis(ctx, p, st.ID, 0)
		j, err := db.FindJobByID(ctx, p, kv.JobAnalysis, v.JobID)
		if err != nil {
			t.Fatal(err)
		}
		spec, _ := j.AnalysisSpec()
		if spec.Trigger != kv.AnalysisOnInterview || len(v.Sources) != len(live) {
			t.Fatalf("spec %+v, %d sources", spec, len(v.Sources))
		}
	})
}

// TestBoundText: a message longer than the engine reads is cut on a character
// boundary to a prefix, so a quote of what is kept is still a span of the message.
func TestBoundText(t *testing.T) {
	short := strings.Repeat("é", analysisMaxRunes)
	if got := boundText(short); got != short {
		t.Fatalf("a message of exactly the bound was cut to %d runes", len([]rune(got)))
	}
	long := strings.Repeat("é", analysisMaxRunes-1) + "日本語" + strings.Repeat("x", 5000)
	got := boundText(long)
	if n := len([]rune(got)); n != analysisMaxRunes || !strings.HasPrefix(long, got) || !strings.HasSuffix(got, "日") {
		t.Fatalf("cut to %d runes, prefix %v, ends %q", n, strings.HasPrefix(long, got), got[len(got)-3:])
	}
}
