package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"interviewd/kv"
)

// BenchmarkA2AGetStudy is SendMessage of the get_study skill, one JSON-RPC POST per
// message answered with the completed task (kept in the store), held to
// BenchmarkRESTGetStudy: as many in flight as GOMAXPROCS, over a loopback socket.
func BenchmarkA2AGetStudy(b *testing.B) {
	e := mustBenchServe(b)
	st := e.study
	_, secret, err := e.db.CreateKey(context.Background(), kv.KeyInput{OrgID: st.OrgID, Name: "agent", Environment: kv.EnvLive, Scopes: []string{"studies:read", "agent:run"}})
	if err != nil {
		b.Fatal(err)
	}
	// Every message has its own id: one sent again is answered with the first's task.
	head := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-`
	tail := `","role":"ROLE_USER","parts":[{"data":{"skill":"get_study","arguments":{"study_id":"` + st.ID.String() + `"}}}]}}}`
	var sent atomic.Int64
	b.SetParallelism(16) // 32 in flight on 2 cores, as go run ./bench drives it
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			body := head + strconv.FormatInt(sent.Add(1), 10) + tail
			req, _ := http.NewRequest("POST", e.url+"/v1/a2a", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+secret)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("A2A-Version", "1.0")
			resp, err := e.client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			raw, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != 200 || !bytes.Contains(raw, []byte(`"TASK_STATE_COMPLETED"`)) {
				b.Errorf("status %d: %.300s", resp.StatusCode, raw)
			}
		}
	})
}
