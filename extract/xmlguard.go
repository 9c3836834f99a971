package extract

import (
	"bytes"
	"io"
)

// maxXMLRun bounds the bytes encoding/xml may have to buffer for one token: the span
// between two '<' in ordinary markup, or one comment, CDATA section or processing
// instruction. Office XML runs are far shorter; a longer one is a memory attack.
const maxXMLRun = 1 << 20

// xmlGuard passes XML through while tracking just enough of its syntax to bound
// every token encoding/xml will buffer (see maxXMLRun). It refuses document type
// declarations, which Office Open XML never uses. Its reads fail with errRejected.
type xmlGuard struct {
	r     io.Reader
	state guardState
	run   int // bytes in the current token
	match int // progress through the opener or closer being matched
	err   error
}

type guardState uint8

const (
	inMarkup  guardState = iota // text and tags
	afterLT                     // just read '<'
	afterBang                   // read "<!"
	inDashes                    // read "<!-"
	inOpener                    // reading "<![CDATA["
	inComment
	inCDATA
	inPI
)

const cdataOpener = "<![CDATA["

// Read passes bytes through, or fails with errRejected.
func (g *xmlGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	if gerr := g.scan(p[:n]); gerr != nil {
		g.err = gerr
		return 0, gerr
	}
	return n, err
}

// scan advances the state over b.
func (g *xmlGuard) scan(b []byte) error {
	for len(b) > 0 {
		if g.state == inMarkup {
			i := bytes.IndexByte(b, '<')
			if i < 0 {
				g.run += len(b)
				break
			}
			g.run += i
			if g.run > maxXMLRun {
				return errRejected
			}
			b = b[i+1:]
			g.run, g.state = 1, afterLT
			continue
		}
		c := b[0]
		b = b[1:]
		g.run++
		if g.run > maxXMLRun {
			return errRejected
		}
		switch g.state {
		case afterLT:
			switch c {
			case '!':
				g.state = afterBang
			case '?':
				g.state, g.match = inPI, 0
			default:
				g.state = inMarkup
			}
		case afterBang:
			switch c {
			case '-':
				g.state = inDashes
			case '[':
				g.state, g.match = inOpener, 3 // matched "<!["
			default:
				return errRejected // <!DOCTYPE, <!ENTITY, ...
			}
		case inDashes:
			if c != '-' {
				return errRejected
			}
			g.state, g.match = inComment, 0
		case inOpener:
			if c != cdataOpener[g.match] {
				return errRejected
			}
			g.match++
			if g.match == len(cdataOpener) {
				g.state, g.match = inCDATA, 0
			}
		case inComment:
			g.state, g.match = closes(c, '-', g.match, inComment)
		case inCDATA:
			g.state, g.match = closes(c, ']', g.match, inCDATA)
		case inPI:
			switch {
			case c == '?':
				g.match = 1
			case c == '>' && g.match == 1:
				g.state, g.match = inMarkup, 0
			default:
				g.match = 0
			}
		}
		if g.state == inMarkup {
			g.run = 0
		}
	}
	if g.run > maxXMLRun {
		return errRejected
	}
	return nil
}

// closes tracks a closer made of two marks and '>' ("-->", "]]>"): seen counts the
// marks just read. It returns inMarkup once the closer is complete.
func closes(c, mark byte, seen int, state guardState) (guardState, int) {
	switch {
	case c == mark:
		return state, seen + 1
	case c == '>' && seen >= 2:
		return inMarkup, 0
	}
	return state, 0
}
