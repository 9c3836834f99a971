package a2a

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// What the A2A SDK logs through slog lands in the server's zerolog log, as JSON lines
// with their level, attributes and errors, and under the server's level.
func TestA2ASDKLogsJoinServerLog(t *testing.T) {
	var buf bytes.Buffer
	zl := zerolog.New(&buf).Level(zerolog.InfoLevel)
	logger := slog.New(&zerologHandler{log: &zl}).WithGroup("a2a").With("task_id", "t1")
	logger.Error("failed to write an event", "error", errors.New("broken pipe"))
	logger.Debug("not shown at info")
	out := buf.String()
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, `"level":"error"`) || !strings.Contains(out, `"component":"a2a"`) ||
		!strings.Contains(out, `"a2a.task_id":"t1"`) || !strings.Contains(out, `"a2a.error":"broken pipe"`) || !strings.Contains(out, `"message":"failed to write an event"`) {
		t.Fatalf("log: %s", out)
	}
}
