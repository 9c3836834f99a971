package moderator

import (
	"strings"

	"github.com/jdkato/prose/v2"

	"interviewd/tagger"
)

// The part-of-speech tagger the built-in engine reads guidance with: prose's averaged
// perceptron (Penn Treebank tags). Decoding its weights takes about half a second, so
// the model is loaded once, on the first draft (or first follow-up, or analysis: the
// model is the process's one, in package tagger), and shared: tagging only reads it, so
// any goroutine may tag at once. Nothing else in interviewd needs it before then, so a
// start that drafts nothing pays nothing.

// token is one word or punctuation mark of a tagged text.
type token struct {
	text string // as written
	low  string // lowercase, typographic apostrophes straightened
	tag  string // Penn Treebank tag: "NNS", "VBP", "WRB", ...
}

// taggerModel returns the process's shared tagging model (package tagger), loading it
// on first use; nil when the embedded weights cannot be decoded.
func taggerModel() *prose.Model {
	m, err := tagger.Model()
	if err != nil {
		return nil
	}
	return m
}

// builtinMaxTagBytes bounds the text tagged at once: tagging costs about a
// microsecond a byte, and no phrase the engine reads is longer.
const builtinMaxTagBytes = 2 << 10

// tagText splits s into tokens and tags them. Text past builtinMaxTagBytes is not read.
func tagText(s string) []token {
	if len(s) > builtinMaxTagBytes {
		s = truncateRunes(s, builtinMaxTagBytes/2) // runes are at most 4 bytes; cut at a space
	}
	m := taggerModel()
	if m == nil || strings.TrimSpace(s) == "" {
		return nil
	}
	doc, err := prose.NewDocument(strings.ReplaceAll(s, "’", "'"), prose.WithSegmentation(false), prose.WithExtraction(false), prose.UsingModel(m))
	if err != nil {
		return nil
	}
	toks := doc.Tokens()
	out := make([]token, 0, len(toks))
	for _, t := range toks {
		out = append(out, token{text: t.Text, low: strings.ToLower(t.Text), tag: t.Tag})
	}
	return out
}

// nounCapable reports whether a word the tagger read as an adjective can also be a
// noun ("a flat"): the tagger reads it as one where only a noun fits.
func nounCapable(w string) bool {
	toks := tagText("the " + w + " is")
	return len(toks) == 3 && strings.HasPrefix(toks[1].tag, "NN")
}
