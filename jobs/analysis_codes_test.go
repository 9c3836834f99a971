package jobs

import (
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"interviewd/kv"
	"interviewd/moderator"
)

// TestAnalysisResearcherCodes: a study's tags come out as researcher codes with the
// annotated spans, redacted as the messages are; erasing an interview takes it out of
// the codes of every stored version.
func TestAnalysisResearcherCodes(t *testing.T) {
	db := mustOpenDB(t, t.TempDir())
	defer db.Close()
	ctx := context.Background()
	org, _, err := db.CreateOrg(ctx, kv.OrgInput{Name: "Codes", Email: "codes@example.com", Credits: 20})
	if err != nil {
		t.Fatal(err)
	}
	p := kv.Partition{Org: org.ID, Env: kv.EnvLive}
	brief := analysisBrief("Shifts")
	st, err := db.CreateStudy(ctx, kv.StudyInput{Partition: p, Brief: brief})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetStudyMode(ctx, p, st.ID, kv.ModeLive); err != nil {
		t.Fatal(err)
	}
	questions := append(append([]string{}, brief.PreInterviewQuestions...), brief.VerbatimQuestions...)
	answer := "We swap shifts by phone and mail " + analysisEmail + " on Fridays."
	a := completeLive(t, db, st, "p1", questions, []string{answer}, true)
	b := completeLive(t, db, st, "p2", questions, []string{answer}, true)
	open := completeLive(t, db, st, "p3", questions, []string{answer}, false) // in progress: not included

	swaps, _ := db.CreateTag(ctx, p, st.ID, "Swaps")
	unused, _ := db.CreateTag(ctx, p, st.ID, "Unused")
	mail := strings.Index(answer, analysisEmail)
	annotate := func(iv kv.Interview, start, end int, tags []kv.ID, note string) {
		t.Helper()
		if _, err := db.CreateAnnotation(ctx, kv.AnnotationInput{Partition: p, InterviewID: iv.ID, MessageIndex: 1, Start: start, End: end, TagIDs: tags, Note: note}); err != nil {
			t.Fatal(err)
		}
	}
	annotate(a, 3, 14, []kv.ID{swaps.ID}, "by phone, ask "+analysisEmail)
	annotate(b, 3, 14, []kv.ID{swaps.ID}, "")
	annotate(b, mail, mail+len(analysisEmail), []kv.ID{swaps.ID}, "") // an address: redacted like the message
	annotate(open, 3, 14, []kv.ID{swaps.ID}, "")

	r := NewRunner(Config{DB: db, Moderator: moderator.NewBuiltin(), Log: zerolog.Nop(), Plugins: mustPlugins(t)})
	defer r.Close(ctx)
	if j := waitAnalysis(t, db, p, startAnalysis(t, r, db, p, st).ID); j.Status != kv.AnalysisCompleted {
		t.Fatalf("job %+v", j)
	}
	v, err := db.FindAnalysis(ctx, p, st.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(v.Body), analysisEmail) {
		t.Fatalf("an address in the stored analysis: %s", v.Body)
	}
	got := decodeAnalysis(t, v).ResearcherCodes
	if len(got) != 2 || got[0].ID != swaps.ID.String() || got[0].Name != "Swaps" || got[1].ID != unused.ID.String() || len(got[1].Quotes) != 0 {
		t.Fatalf("codes %+v", got)
	}
	c := got[0]
	if c.InterviewCount != 2 || c.Share != 1 || len(c.Quotes) != 3 || c.Quotes[0].InterviewID != a.ID.String() || c.Quotes[0].Text != "swap shifts" ||
		c.Quotes[0].Note != "by phone, ask [EMAIL]" || c.Quotes[2].Text != "[EMAIL]" {
		t.Fatalf("code %+v", c)
	}

	if _, err := db.EraseInterview(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	v, _ = db.FindAnalysis(ctx, p, st.ID, 0)
	c = decodeAnalysis(t, v).ResearcherCodes[0]
	if c.InterviewCount != 1 || c.Share != 1 || len(c.Quotes) != 2 || c.Quotes[0].InterviewID != b.ID.String() {
		t.Fatalf("after erasing an interview: %+v", c)
	}
}
