package a2a

import (
	"interviewd/server/pipeline"
	"strconv"
	"sync"
)

// a2aMaxStreams bounds the event streams (SendStreamingMessage, SubscribeToTask) one
// credential holds open at once. A stream holds a connection and polls its task for as
// long as the job runs; without a bound one key could tie up the server with streams
// it never reads.
const MaxStreams = 8

// streamSlots counts the open streams of each credential.
type streamSlots struct {
	mu   sync.Mutex
	open map[string]int
}

func newStreamSlots() *streamSlots { return &streamSlots{open: map[string]int{}} }

// take claims a stream for the credential key, or refuses with the REST 429 shape
// (rate_limited, a wait) when it holds a2aMaxStreams already. The release it returns
// gives the slot back; call it once, when the stream ends.
func (s *streamSlots) take(key string) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[key] >= MaxStreams {
		return nil, &pipeline.APIError{Status: 429, Code: "rate_limited", RetryAfter: 1,
			Detail: "This key has " + strconv.Itoa(MaxStreams) + " event streams open, the most it may; close one (or read tasks with GetTask) and retry."}
	}
	s.open[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.open[key]--; s.open[key] <= 0 {
				delete(s.open, key)
			}
		})
	}, nil
}
