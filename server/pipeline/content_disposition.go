package pipeline

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Downloads name their file with an RFC 6266 Content-Disposition header. The name can
// come from a study's title or an organisation's export plugin, so it is hostile: a
// quote or a CR/LF would break out of the header, a path separator would steer where a
// browser saves it. attachmentDisposition is the one place such a header is built.

// maxDownloadName bounds a download's name (in characters): file systems take 255
// bytes, and a browser shows far less.
const maxDownloadName = 120

// AttachmentDisposition returns `attachment; filename="ascii"; filename*=UTF-8”pct`:
// the quoted ASCII fallback for old clients and the RFC 5987 UTF-8 name for the rest.
// Control characters, quotes, backslashes and path separators never reach either; a
// name left empty becomes "download".
func AttachmentDisposition(name string) string {
	clean := downloadName(name)
	return `attachment; filename="` + asciiFallback(clean) + `"; filename*=UTF-8''` + pctEncode(clean)
}

// downloadName is name as a safe bare file name: valid UTF-8, only the part after the
// last path separator, without control or format characters, quotes or backslashes,
// no leading dots or spaces (no hidden file, never "." or ".."), at most
// maxDownloadName characters.
func downloadName(name string) string {
	name = strings.ToValidUTF8(name, "_")
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	n := 0
	for _, r := range name {
		if n == maxDownloadName {
			break
		}
		switch {
		case r == '"' || r == '\\' || r == '/' || r == ':' || r == '%':
			r = '_'
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r), r == utf8.RuneError,
			r == '\u2028', r == '\u2029':
			continue
		}
		b.WriteRune(r)
		n++
	}
	out := strings.TrimLeft(strings.TrimSpace(b.String()), ".")
	if out = strings.TrimSpace(out); out == "" {
		return "download"
	}
	return out
}

// asciiFallback keeps printable ASCII and turns anything else into '_'.
func asciiFallback(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r < 0x20 || r > 0x7e {
			r = '_'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// pctEncode is RFC 5987's value-chars: attr-chars as they are, every other byte of the
// UTF-8 as %XX.
func pctEncode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isAttrChar(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// isAttrChar reports RFC 5987's attr-char: ALPHA / DIGIT / "!#$&+-.^_`|~".
func isAttrChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}
