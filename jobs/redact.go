package jobs

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	json "github.com/goccy/go-json"

	"interviewd/kv"
	"interviewd/plugins"
)

// redactRecord is one interview's free text on its way through a redactor: context
// values under "c:<key>", messages under "m:<position>".
type redactRecord struct {
	ID    string            `json:"id"`
	Cells map[string]string `json:"cells"`
}

// redactStep is one redactor of the chain with its configuration.
type redactStep struct {
	plugin *plugins.Plugin
	config any
}

// redactInterviews redacts an export's interviews (see redactTranscripts) before the
// table is laid out: every answer cell and the transcript are built from the redacted
// messages, so each piece of text is redacted once although it appears twice. The
// brief's questions head their columns and are not sent.
func (r *Runner) redactInterviews(ctx context.Context, org kv.ID, brief kv.Brief, ivs []exportInterview) error {
	return r.redactTranscripts(ctx, org, briefQuestions(brief), ivs)
}

// briefQuestions returns the brief's scripted questions, screener then verbatim.
func briefQuestions(brief kv.Brief) []string {
	return append(append([]string{}, brief.PreInterviewQuestions...), brief.VerbatimQuestions...)
}

// redactTranscripts runs the interviews' free text (context values and messages)
// through the organisation's redaction chain, in place: the built-in redactor
// (configured by the organisation's settings), then each of the organisation's own
// redactors. Exports and analyses both read interviews through it, so a quote and an
// export cell are redacted alike. Interviewer messages that are exactly one of
// authored (the study's scripted questions) are the researcher's own words and are not
// sent. The stored transcripts are never touched: ivs hold copies.
func (r *Runner) redactTranscripts(ctx context.Context, org kv.ID, authored []string, ivs []exportInterview) error {
	if r.plugins == nil {
		return errors.New("no plugin host configured")
	}
	settings, err := r.db.FindRedaction(ctx, org)
	if err != nil {
		return err
	}
	builtin, err := r.plugins.Builtin(ctx, plugins.BuiltinRedactor)
	if err != nil {
		return err
	}
	chain := []redactStep{{builtin, settings}}
	own, err := r.orgPlugins(ctx, org, kv.PluginRedactor)
	if err != nil {
		return err
	}
	for _, pl := range own {
		chain = append(chain, redactStep{pl, map[string]any{}})
	}
	isAuthored := map[string]bool{}
	for _, q := range authored {
		isAuthored[q] = true
	}
	records := make([]json.RawMessage, len(ivs))
	for i, e := range ivs {
		cells := map[string]string{}
		for k, v := range e.Interview.EntryAttributes {
			if v != "" {
				cells["c:"+k] = v
			}
		}
		for n, m := range e.Transcript {
			if m.Text != "" && !(m.Speaker == kv.SpeakerInterviewer && isAuthored[m.Text]) {
				cells["m:"+strconv.Itoa(n)] = m.Text
			}
		}
		raw, err := json.Marshal(redactRecord{ID: e.Interview.ID.String(), Cells: cells})
		if err != nil {
			return err
		}
		records[i] = raw
	}
	for _, step := range chain {
		if len(records) == 0 {
			break
		}
		parts, err := inChunks(ctx, len(records), func(ctx context.Context, lo, hi int) ([]json.RawMessage, error) {
			var out []json.RawMessage
			err := r.metrics.pluginRun(pluginRedactor, func() (err error) {
				out, err = step.plugin.Redact(ctx, step.config, records[lo:hi])
				return err
			})
			return out, err
		})
		if err != nil {
			return err
		}
		records = records[:0:0]
		for _, part := range parts {
			records = append(records, part...)
		}
	}
	for i, raw := range records {
		var rec redactRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			return fmt.Errorf("redacted record %d: %w", i, err)
		}
		e := &ivs[i]
		// A redactor must hand back every record in order with every cell: anything
		// else fails the job rather than falling back to text that was not redacted
		// or putting one interview's words on another's row.
		if rec.ID != e.Interview.ID.String() {
			return fmt.Errorf("a redactor returned record %d out of order (id %q, want %s)", i, rec.ID, e.Interview.ID)
		}
		attrs := make(map[string]string, len(e.Interview.EntryAttributes))
		for k, v := range e.Interview.EntryAttributes {
			if v != "" {
				red, ok := rec.Cells["c:"+k]
				if !ok {
					return fmt.Errorf("a redactor dropped a context cell of record %d", i)
				}
				v = red
			}
			attrs[k] = v
		}
		e.Interview.EntryAttributes = attrs
		transcript := append([]exportMessage(nil), e.Transcript...)
		for n, m := range transcript {
			if m.Text == "" || (m.Speaker == kv.SpeakerInterviewer && isAuthored[m.Text]) {
				continue
			}
			red, ok := rec.Cells["m:"+strconv.Itoa(n)]
			if !ok {
				return fmt.Errorf("a redactor dropped message %d of record %d", n, i)
			}
			transcript[n].Text = red
		}
		e.Transcript = transcript
	}
	return nil
}
