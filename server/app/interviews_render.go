package app

import (
	"html/template"
	"sync"

	"interviewd/kv"
	"interviewd/webui"
)

// transcriptRenders keeps the rendered content of recently read transcript pages. A
// transcript only ever grows (messages are appended, never edited), so an interview's
// id, its transcript length and the few facts the page shows beside it (status, end,
// length, study name) name the content: a render is reused while they are the same,
// and the page skips reading and decoding every message. An erased interview is not
// found before its render is looked for.
type transcriptRenders struct {
	mu sync.Mutex
	m  map[kv.ID]transcriptRender
}

type transcriptRender struct {
	key  string // the facts the render was made from (see transcriptKey)
	html template.HTML
	// options are the participant messages the page's highlight form offers, made
	// from the same messages, so a kept render needs no message read for them.
	options []webui.MessageOption
}

// transcriptRendersMax bounds the renders kept (about 25 KB each for 60 messages);
// when full, the map starts over: simpler than an LRU, and a miss costs one render.
const transcriptRendersMax = 512

func newTranscriptRenders() *transcriptRenders {
	return &transcriptRenders{m: map[kv.ID]transcriptRender{}}
}

// get returns the render of interview id made from key, if kept.
func (r *transcriptRenders) get(id kv.ID, key string) (template.HTML, []webui.MessageOption, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tr, ok := r.m[id]
	if !ok || tr.key != key {
		return "", nil, false
	}
	return tr.html, tr.options, true
}

func (r *transcriptRenders) put(id kv.ID, key string, html template.HTML, options []webui.MessageOption) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.m) >= transcriptRendersMax {
		clear(r.m)
	}
	r.m[id] = transcriptRender{key: key, html: html, options: options}
}
