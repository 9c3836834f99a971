package moderator

import (
	"sync"
	"sync/atomic"
)

// Every turn checks the engine's probe against each scripted question of the brief, and
// the wording of those questions changes only with a new design version: their
// normalised words are remembered rather than worked out again at every turn. Only
// scripted questions are kept (researchers' text), never a participant's words.

// questionWordsMemoSize bounds the remembered questions; when full it starts over.
const questionWordsMemoSize = 4096

// questionWordsMemo maps a question to its words. A sync.Map, since every probe of
// every turn reads it and it is written only when a question is first seen: its reads
// take no lock that the cores would pass between them.
var questionWordsMemo struct {
	m sync.Map
	n atomic.Int64 // entries stored (about: the count may run ahead of a Clear)
}

// questionWords is normalisedWords for a scripted question.
func questionWords(q string) string {
	if w, ok := questionWordsMemo.m.Load(q); ok {
		return w.(string)
	}
	w := normalisedWords(q)
	if questionWordsMemo.n.Add(1) > questionWordsMemoSize {
		questionWordsMemo.m.Clear()
		questionWordsMemo.n.Store(1)
	}
	questionWordsMemo.m.Store(q, w)
	return w
}

// fixedProbe is what acceptProbe works out about a probe that depends on the probe alone.
type fixedProbe struct {
	leading bool   // isLeading
	words   string // normalisedWords
}

// fixedProbes holds the facts of each of the built-in engine's fixed probes, which are
// most of the probes a built-in interview checks.
var fixedProbes = sync.OnceValue(func() map[string]fixedProbe {
	m := make(map[string]fixedProbe, len(builtinProbes))
	for _, p := range builtinProbes {
		m[p] = fixedProbe{leading: isLeading(p), words: normalisedWords(p)}
	}
	return m
})

// probeFacts is isLeading and normalisedWords of p, from fixedProbes for a fixed probe.
func probeFacts(p string) fixedProbe {
	if f, ok := fixedProbes()[p]; ok {
		return f
	}
	return fixedProbe{leading: isLeading(p), words: normalisedWords(p)}
}
