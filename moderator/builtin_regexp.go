package moderator

import (
	"regexp"
	"sync"
)

// lazyRegexp is a regular expression compiled on first use. The built-in engine's
// fifty-odd patterns, compiled at package init, were most of interviewd's start-up
// (tens of milliseconds and 2.8 MB before main ran), paid by every start and every
// admin command whether or not anything asked the built-in engine a thing.
type lazyRegexp struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
}

// builtinPatterns is every lazyRegexp, so a test can compile them all as package init
// used to (a bad pattern fails the build's tests, not a participant's request).
var builtinPatterns []*lazyRegexp

// newLazyRegexp returns src to be compiled when first used; it panics then if src is
// not a valid pattern, as regexp.MustCompile does.
func newLazyRegexp(src string) *lazyRegexp {
	l := &lazyRegexp{src: src}
	builtinPatterns = append(builtinPatterns, l)
	return l
}

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.src) })
	return l.re
}

// The methods of regexp.Regexp the built-in engine uses.

func (l *lazyRegexp) MatchString(s string) bool { return l.get().MatchString(s) }

func (l *lazyRegexp) FindStringIndex(s string) []int { return l.get().FindStringIndex(s) }

func (l *lazyRegexp) FindStringSubmatch(s string) []string { return l.get().FindStringSubmatch(s) }

func (l *lazyRegexp) FindStringSubmatchIndex(s string) []int {
	return l.get().FindStringSubmatchIndex(s)
}

func (l *lazyRegexp) FindAllStringIndex(s string, n int) [][]int {
	return l.get().FindAllStringIndex(s, n)
}

func (l *lazyRegexp) FindAllStringSubmatch(s string, n int) [][]string {
	return l.get().FindAllStringSubmatch(s, n)
}

func (l *lazyRegexp) ReplaceAllString(src, repl string) string {
	return l.get().ReplaceAllString(src, repl)
}

func (l *lazyRegexp) Split(s string, n int) []string { return l.get().Split(s, n) }
