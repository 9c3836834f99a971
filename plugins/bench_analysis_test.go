package plugins

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"interviewd/plugins/internal/analysisdoc"
)

// BenchmarkBuiltinQDPXLargeStudy formats a large study as a REFI-QDA project through
// the host: 500 interviews of 40 messages (about 7 MB of transcripts) and a quote from
// every participant message, the size the per-run time limit must allow.
func BenchmarkBuiltinQDPXLargeStudy(b *testing.B) {
	h := mustHost(b, Config{})
	p := mustBuiltin(b, h, BuiltinQDPX)
	a := sampleAnalysis()
	var ivs []analysisdoc.Interview
	for i := 0; i < 500; i++ {
		iv := analysisdoc.Interview{ID: "iv-" + strconv.Itoa(i), Context: map[string]string{"plan": []string{"free", "pro"}[i%2]}}
		for m := 0; m < 40; m++ {
			text := strings.Repeat("We plan the rota on Fridays, and Zoë swaps shifts by phone. ", 6)
			speaker := "participant"
			if m%2 == 0 {
				speaker, text = "interviewer", "How do you plan shifts?"
			} else {
				a.Themes[0].Quotes = append(a.Themes[0].Quotes, analysisdoc.Quote{InterviewID: iv.ID, MessageIndex: m, Text: "Zoë swaps shifts by phone"})
			}
			iv.Messages = append(iv.Messages, analysisdoc.Message{Speaker: speaker, Text: text})
		}
		ivs = append(ivs, iv)
	}
	recs := analysisRecords(b, a, ivs)
	size := 0
	for _, r := range recs {
		size += len(r)
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for range b.N {
		var out bytes.Buffer
		if err := p.Format(context.Background(), map[string]any{}, recs, &out); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(out.Len()), "artifact-bytes")
	}
}
