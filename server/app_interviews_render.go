package server

import (
	"html/template"
	"sync"

	"interviewd/kv"
)

// transcriptRenders keeps the rendered messages of recently read transcripts. A
// transcript only ever grows (messages are appended, never edited), so an interview's
// id and its transcript length name its content: a render is reused while the stored
// length is the same, and the page skips reading and decoding every message. An
// erased interview is not found before its render is looked for.
type transcriptRenders struct {
	mu sync.Mutex
	m  map[kv.ID]transcriptRender
}

type transcriptRender struct {
	length int // messages the render holds
	html   template.HTML
}

// transcriptRendersMax bounds the renders kept (about 25 KB each for 60 messages);
// when full, the map starts over: simpler than an LRU, and a miss costs one render.
const transcriptRendersMax = 512

func newTranscriptRenders() *transcriptRenders {
	return &transcriptRenders{m: map[kv.ID]transcriptRender{}}
}

// get returns the render of interview id at length messages, if kept.
func (r *transcriptRenders) get(id kv.ID, length int) (template.HTML, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tr, ok := r.m[id]
	if !ok || tr.length != length {
		return "", false
	}
	return tr.html, true
}

func (r *transcriptRenders) put(id kv.ID, length int, html template.HTML) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.m) >= transcriptRendersMax {
		clear(r.m)
	}
	r.m[id] = transcriptRender{length: length, html: html}
}
