// Package tagger holds the process's one part-of-speech tagger: prose's averaged
// perceptron, whose weights take about 28 MB once decoded. Both built-in engines read
// with it (the findings engine in analysis labels statements; the built-in interviewer
// in moderator picks what a follow-up refers to), and neither may import the other, so
// the model lives here: decoded once, on first use, and shared by every goroutine (the
// tagger only reads its weights).
package tagger

import (
	"sync"

	"github.com/jdkato/prose/v2"
)

// model decodes the weights on the first call; later calls return the same model.
var model = sync.OnceValues(func() (*prose.Model, error) {
	// A document made with tagging but neither segmentation nor entity extraction
	// carries a model with only the tagger loaded.
	doc, err := prose.NewDocument("", prose.WithSegmentation(false), prose.WithExtraction(false))
	if err != nil {
		return nil, err
	}
	return doc.Model, nil
})

// Model returns the shared tagging model, decoding it on the first call (a fraction of
// a second). It returns prose's error when the embedded weights cannot be decoded.
func Model() (*prose.Model, error) { return model() }

// Token is one token of a tagged text: its text as written and its Penn Treebank tag.
type Token struct {
	Text, Tag string
}

// Tag splits text into tokens and tags each. It returns Model's error.
func Tag(text string) ([]Token, error) {
	m, err := Model()
	if err != nil {
		return nil, err
	}
	doc, err := prose.NewDocument(text, prose.WithSegmentation(false), prose.WithExtraction(false), prose.UsingModel(m))
	if err != nil {
		return nil, err
	}
	toks := doc.Tokens()
	out := make([]Token, len(toks))
	for i, t := range toks {
		out[i] = Token{Text: t.Text, Tag: t.Tag}
	}
	return out, nil
}
