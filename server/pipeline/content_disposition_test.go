package pipeline

import (
	"mime"
	"strings"
	"testing"
	"unicode"
)

func TestAttachmentDisposition(t *testing.T) {
	for _, c := range []struct{ in, header, name string }{
		{"interviews.csv", `attachment; filename="interviews.csv"; filename*=UTF-8''interviews.csv`, "interviews.csv"},
		{"Café ☕ study.csv", `attachment; filename="Caf_ _ study.csv"; filename*=UTF-8''Caf%C3%A9%20%E2%98%95%20study.csv`, "Café ☕ study.csv"},
		{`a"; filename="evil.exe`, `attachment; filename="a_; filename=_evil.exe"; filename*=UTF-8''a_%3B%20filename%3D_evil.exe`, `a_; filename=_evil.exe`},
		{"x.csv\r\nSet-Cookie: a=b", `attachment; filename="x.csvSet-Cookie_ a=b"; filename*=UTF-8''x.csvSet-Cookie_%20a%3Db`, "x.csvSet-Cookie_ a=b"},
		{"../../etc/passwd", `attachment; filename="passwd"; filename*=UTF-8''passwd`, "passwd"},
		{`C:\Users\x\report.csv`, `attachment; filename="report.csv"; filename*=UTF-8''report.csv`, "report.csv"},
		{"..", `attachment; filename="download"; filename*=UTF-8''download`, "download"},
		{"", `attachment; filename="download"; filename*=UTF-8''download`, "download"},
		{".hidden", `attachment; filename="hidden"; filename*=UTF-8''hidden`, "hidden"},
		{"100%.csv", `attachment; filename="100_.csv"; filename*=UTF-8''100_.csv`, "100_.csv"},
		{"a\u202egnp.exe", `attachment; filename="agnp.exe"; filename*=UTF-8''agnp.exe`, "agnp.exe"},
		{"bad\xffutf8", `attachment; filename="bad_utf8"; filename*=UTF-8''bad_utf8`, "bad_utf8"},
	} {
		got := AttachmentDisposition(c.in)
		if got != c.header {
			t.Errorf("%q:\n got %s\nwant %s", c.in, got, c.header)
		}
		disp, params, err := mime.ParseMediaType(got)
		if err != nil || disp != "attachment" || params["filename"] != c.name {
			t.Errorf("%q parses as %q %v %v, want filename %q", c.in, disp, params, err, c.name)
		}
	}
	if long := AttachmentDisposition(strings.Repeat("é", 500)); strings.Count(long, "%C3%A9") != maxDownloadName {
		t.Errorf("a long name is not cut to %d characters: %d", maxDownloadName, strings.Count(long, "%C3%A9"))
	}
}

// FuzzAttachmentDisposition: whatever the name, the header parses as an attachment
// whose file name is a bare, non-empty name without control characters, and the header
// holds no CR, LF or other control byte.
func FuzzAttachmentDisposition(f *testing.F) {
	for _, s := range []string{"a.csv", "../x", `"`, "\r\n", "é/ü\\x", "\x00", "..", " . ", "%2e%2e%2f", "\u2028x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		h := AttachmentDisposition(name)
		for i := 0; i < len(h); i++ {
			if h[i] < 0x20 || h[i] == 0x7f {
				t.Fatalf("%q: control byte in %q", name, h)
			}
		}
		disp, params, err := mime.ParseMediaType(h)
		if err != nil || disp != "attachment" {
			t.Fatalf("%q: %q does not parse: %v", name, h, err)
		}
		got := params["filename"]
		if got == "" || strings.ContainsAny(got, `/\"%`) || got == "." || got == ".." || strings.HasPrefix(got, ".") {
			t.Fatalf("%q: file name %q", name, got)
		}
		for _, r := range got {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
				t.Fatalf("%q: file name %q holds %U", name, got, r)
			}
		}
	})
}
