package jobs

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"interviewd/kv"
	"interviewd/moderator"
)

// TestAuthoringRefusalSaysWhy: a refused authoring job ends failed with the engine's
// reason as its error, for the researcher: a refine that could not be applied says
// which instruction, why, and what the engine understands, and changes nothing.
func TestAuthoringRefusalSaysWhy(t *testing.T) {
	f := mustSimFixture(t)
	r := f.mustRunner(t, Config{Moderator: moderator.NewBuiltin()})
	ctx := context.Background()
	author := func(study *kv.ID, guidance string) kv.Job {
		t.Helper()
		j, err := f.db.CreateAuthoringJob(ctx, kv.AuthoringInput{Partition: f.p, JobID: kv.NewV4(), ThreadID: kv.NewV4(), StudyID: study, Guidance: guidance}, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Enqueue(j)
		return waitJob(t, f.db, f.p, j.ID)
	}
	cases := []struct {
		name, guidance string
		refine         bool
		want           []string // the job's error starts with the first and contains the rest
	}{
		{name: "ErrRefineNotUnderstood", refine: true, guidance: "Add a question about pricing, then change objective 1.",
			want: []string{`Nothing was changed: the built-in engine could not apply "change objective 1" (say what objective 1 should become, as in "change objective 1 to …").`,
				"It understands: add a question about …;", "change objective 1 to …;", "make it shorter."}},
		{name: "ErrRefineOutOfRange", refine: true, guidance: "remove question 7",
			want: []string{`Nothing was changed: the built-in engine could not apply "remove question 7" (there is no question 7: the study has 2, numbered from 1).`}},
		{name: "ErrCreateNotResearch", guidance: "Write me a poem about bread.",
			want: []string{"No study was drafted: it asks for creative writing, not a research study."}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var study *kv.ID
			if c.refine {
				study = &f.study.ID
			}
			j := author(study, c.guidance)
			if j.Status != kv.AuthoringFailed || !strings.HasPrefix(j.Error, c.want[0]) {
				t.Fatalf("job %s %q, want failed with %q", j.Status, j.Error, c.want[0])
			}
			for _, w := range c.want[1:] {
				if !strings.Contains(j.Error, w) {
					t.Errorf("job error %q does not say %q", j.Error, w)
				}
			}
		})
	}
	t.Run("OK_RefusedRefineChangesNothing", func(t *testing.T) {
		st, err := f.db.FindStudyByID(ctx, f.p, f.study.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*st.Brief, *f.study.Brief) || st.UpdatedAt != f.study.UpdatedAt {
			t.Fatalf("a refused refine changed the study: %+v", st.Brief)
		}
	})
}
