package kv

import (
	"context"
	"testing"
)

// An export of a study's findings settles its analysis version when it is asked for,
// in the transaction that records the job.
func TestCreateExportJobAnalysis(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org, _, _ := db.CreateOrg(ctx, OrgInput{Name: "Findings", Email: "f@example.com", Credits: 10})
	p := Partition{Org: org.ID, Env: EnvLive}
	never := mustStudy(t, db, p, "Never live")
	st := liveStudy(t, db, p, "Live")
	a := mustInterview(t, db, st, "ann", true)
	export := func(study ID, version int) (Job, error) {
		return db.CreateExportJob(ctx, ExportInput{Partition: p, JobID: db.NewID(), StudyID: study, Format: "qdpx", Analysis: true, AnalysisVersion: version}, nil)
	}
	wantRefusal := func(t *testing.T, err error, code, reason string) {
		t.Helper()
		e, ok := err.(*Error)
		if !ok || ErrorCode(err) != code || e.Reason != reason {
			t.Fatalf("error %v, want %s %s", err, code, reason)
		}
	}

	t.Run("ErrNeverLive", func(t *testing.T) {
		_, err := export(never.ID, 0)
		wantRefusal(t, err, ECONFLICT, "study_not_live")
	})
	t.Run("ErrNotReady", func(t *testing.T) {
		_, err := export(st.ID, 0)
		wantRefusal(t, err, ECONFLICT, "analysis_not_ready")
	})
	mustAnalysis(t, db, p, st, a)
	mustAnalysis(t, db, p, st, a)
	t.Run("OK_Latest", func(t *testing.T) {
		j, err := export(st.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if spec, err := j.ExportSpec(); err != nil || spec.AnalysisVersion != 2 || spec.Format != "qdpx" || spec.StudyID != st.ID {
			t.Fatalf("spec %+v %v", spec, err)
		}
		stored, err := db.FindJobByID(ctx, p, JobExport, j.ID)
		if spec, _ := stored.ExportSpec(); err != nil || spec.AnalysisVersion != 2 {
			t.Fatalf("stored spec %+v %v", spec, err)
		}
	})
	t.Run("OK_Version", func(t *testing.T) {
		j, err := export(st.ID, 1)
		if spec, _ := j.ExportSpec(); err != nil || spec.AnalysisVersion != 1 {
			t.Fatalf("spec %+v %v", spec, err)
		}
	})
	t.Run("ErrNoSuchVersion", func(t *testing.T) {
		for _, v := range []int{3, 1 << 33} {
			_, err := export(st.ID, v)
			wantRefusal(t, err, ENOTFOUND, "analysis_not_found")
		}
	})
	t.Run("OK_TableFormatsIgnoreAnalyses", func(t *testing.T) {
		j, err := db.CreateExportJob(ctx, ExportInput{Partition: p, JobID: db.NewID(), StudyID: never.ID, Format: "csv"}, nil)
		if spec, _ := j.ExportSpec(); err != nil || spec.AnalysisVersion != 0 {
			t.Fatalf("csv spec %+v %v", spec, err)
		}
	})
}

func TestPutPluginRefusesBuiltinFormatNames(t *testing.T) {
	db := mustOpenDB(t, nil)
	org, _, _ := db.CreateOrg(context.Background(), OrgInput{Name: "Plugins", Email: "p@example.com", Credits: 1})
	for _, name := range BuiltinFormats {
		_, err := db.PutPlugin(context.Background(), OrgPlugin{OrgID: org.ID, Kind: PluginFormatter, Name: name, Blob: "plugins/x.wasm"})
		if ErrorCode(err) != EINVALID {
			t.Errorf("a formatter named %s: %v", name, err)
		}
	}
	if _, err := db.PutPlugin(context.Background(), OrgPlugin{OrgID: org.ID, Kind: PluginRedactor, Name: "qdpx", Blob: "plugins/x.wasm"}); err != nil {
		t.Errorf("a redactor may be named qdpx: %v", err)
	}
}
