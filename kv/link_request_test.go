package kv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// violations returns "loc|type" for every field error in err, in the order reported,
// or nil when err is nil. It fails the test when err is not an EINVALID *Error.
func violations(tb testing.TB, err error) []string {
	tb.Helper()
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != EINVALID {
		tb.Fatalf("error %v is not an EINVALID *Error", err)
	}
	if len(e.Fields) == 0 {
		tb.Fatalf("EINVALID error without fields: %v", err)
	}
	out := make([]string, 0, len(e.Fields))
	for _, f := range e.Fields {
		parts := make([]string, len(f.Loc))
		for i, l := range f.Loc {
			parts[i] = fmt.Sprint(l)
		}
		out = append(out, strings.Join(parts, ".")+"|"+f.Type)
	}
	return out
}

// referenceEncodedSize encodes ctx with encoding/json (no HTML escaping) and corrects for
// the two ways it departs from the minimal encoding: invalid bytes become \ufffd and
// U+2028/U+2029 are escaped, 6 bytes each where the raw character takes 3.
func referenceEncodedSize(tb testing.TB, ctx map[string]string) int {
	tb.Helper()
	clean := make(map[string]string, len(ctx))
	seps := 0
	for k, v := range ctx {
		// []rune turns every invalid byte into U+FFFD, as a JSON decoder would.
		ck, cv := string([]rune(k)), string([]rune(v))
		seps += strings.Count(ck, "\u2028") + strings.Count(ck, "\u2029")
		seps += strings.Count(cv, "\u2028") + strings.Count(cv, "\u2029")
		clean[ck] = cv
	}
	if len(clean) != len(ctx) {
		// Two keys became equal after replacement; the reference cannot represent that.
		return -1
	}
	if ctx == nil {
		clean = map[string]string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(clean); err != nil {
		tb.Fatalf("encode: %v", err)
	}
	return buf.Len() - 1 - 3*seps // Encode appends a newline
}

// contextOfSize returns a context of 8 ASCII keys whose encoded size is exactly size,
// with the values made of fill (a single character) padded by ASCII letters.
func contextOfSize(tb testing.TB, size int, fill rune) map[string]string {
	tb.Helper()
	ctx := map[string]string{}
	for i := range 8 {
		ctx[fmt.Sprintf("k%d", i)] = ""
	}
	need := size - contextEncodedSize(ctx)
	fw := utf8.RuneLen(fill)
	for i := range 8 {
		k := fmt.Sprintf("k%d", i)
		chars := 0
		var b strings.Builder
		for need >= fw && chars < LinkContextValueMaxChars && (need-fw >= 0) {
			b.WriteRune(fill)
			need -= fw
			chars++
		}
		for need > 0 && chars < LinkContextValueMaxChars {
			b.WriteByte('a')
			need--
			chars++
		}
		ctx[k] = b.String()
	}
	if got := contextEncodedSize(ctx); got != size {
		tb.Fatalf("contextOfSize built %d bytes, want %d", got, size)
	}
	return ctx
}

func keys(n int) map[string]string {
	ctx := make(map[string]string, n)
	for i := range n {
		ctx[fmt.Sprintf("key%02d", i)] = "v"
	}
	return ctx
}

func TestValidateLinkRequest(t *testing.T) {
	k := func(key, value string) map[string]string { return map[string]string{key: value} }
	rep := strings.Repeat
	tests := []struct {
		name string
		req  LinkRequest
		want []string // "loc|type" in reported order; nil means valid
	}{
		{"OKEmpty", LinkRequest{}, nil},
		{"OK20Keys", LinkRequest{Context: keys(20)}, nil},
		{"Err21Keys", LinkRequest{Context: keys(21)}, []string{"context|too_many_keys"}},
		{"OKKey100ASCII", LinkRequest{Context: k(rep("a", 100), "v")}, nil},
		{"ErrKey101ASCII", LinkRequest{Context: k(rep("a", 101), "v")}, []string{"context." + rep("a", 101) + "|string_too_long"}},
		{"OKKey100TwoByte", LinkRequest{Context: k(rep("é", 100), "v")}, nil},
		{"ErrKey101TwoByte", LinkRequest{Context: k(rep("é", 101), "v")}, []string{"context." + rep("é", 101) + "|string_too_long"}},
		{"OKKey100Emoji", LinkRequest{Context: k(rep("😀", 100), "v")}, nil},
		{"ErrKey101Emoji", LinkRequest{Context: k(rep("😀", 101), "v")}, []string{"context." + rep("😀", 101) + "|string_too_long"}},
		{"ErrKeyEmpty", LinkRequest{Context: k("", "v")}, []string{"context.|string_too_short"}},
		{"OKValue2048ASCII", LinkRequest{Context: k("a", rep("x", 2048))}, nil},
		{"ErrValue2049ASCII", LinkRequest{Context: k("a", rep("x", 2049))}, []string{"context.a|string_too_long"}},
		{"OKValue2048Euro", LinkRequest{Context: k("a", rep("€", 2048))}, nil},
		{"ErrValue2049Euro", LinkRequest{Context: k("a", rep("€", 2049))}, []string{"context.a|string_too_long"}},
		{"OKValue2048Emoji", LinkRequest{Context: k("a", rep("😀", 2048))}, nil},
		{"ErrKeyControlSOH", LinkRequest{Context: k("a\x01b", "v")}, []string{"context.a\x01b|control_character"}},
		{"ErrKeyControlDEL", LinkRequest{Context: k("a\x7f", "v")}, []string{"context.a\x7f|control_character"}},
		{"ErrKeyControlNEL", LinkRequest{Context: k("a\u0085", "v")}, []string{"context.a\u0085|control_character"}},
		{"ErrKeyControlNewline", LinkRequest{Context: k("a\n", "v")}, []string{"context.a\n|control_character"}},
		{"ErrKeyNUL", LinkRequest{Context: k("a\x00", "v")}, []string{"context.a\x00|control_character"}},
		{"OKKeyLineSeparator", LinkRequest{Context: k("a\u2028b\u2029", "v")}, nil},
		{"OKKeyFormatCharacter", LinkRequest{Context: k("a\u200bb", "v")}, nil},
		{"OKValueControl", LinkRequest{Context: k("a", "line\nnext\x01\x7f")}, nil},
		{"ErrValueNUL", LinkRequest{Context: k("a", "x\x00y")}, []string{"context.a|null_character"}},
		{"ErrReservedLower", LinkRequest{Context: k("token", "v")}, []string{"context.token|reserved_key"}},
		{"ErrReservedUpper", LinkRequest{Context: k("TOKEN", "v")}, []string{"context.TOKEN|reserved_key"}},
		{"ErrReservedMixed", LinkRequest{Context: k("Mode", "v")}, []string{"context.Mode|reserved_key"}},
		{"ErrReservedLongS", LinkRequest{Context: k("ſtudy", "v")}, []string{"context.ſtudy|reserved_key"}},
		{"ErrReservedKelvin", LinkRequest{Context: k("lin\u212a", "v")}, []string{"context.lin\u212a|reserved_key"}},
		{"ErrReservedUnderscore", LinkRequest{Context: k("Study_ID", "v")}, []string{"context.Study_ID|reserved_key"}},
		{"OKNearReserved", LinkRequest{Context: map[string]string{"tokens": "v", "study-id": "v", "mode ": "v", "lınk": "v"}}, nil},
		{"OKAudienceGroup", LinkRequest{Audience: "group"}, nil},
		{"OKAudiencePerson", LinkRequest{Audience: "person"}, nil},
		{"ErrAudienceCase", LinkRequest{Audience: "Person"}, []string{"audience|enum"}},
		{"ErrAudienceUnknown", LinkRequest{Audience: "everyone"}, []string{"audience|enum"}},
		{"OKNote2048AfterTrim", LinkRequest{Note: " \t\n\u00a0\u3000" + rep("ü", 2048) + "\r\n \u2003"}, nil},
		{"ErrNote2049AfterTrim", LinkRequest{Note: "  " + rep("ü", 2049) + "  "}, []string{"note|string_too_long"}},
		{"ErrNoteNUL", LinkRequest{Note: "a\x00b"}, []string{"note|null_character"}},
		{"OKSize16384", LinkRequest{Context: contextOfSize(t, 16384, 'a')}, nil},
		{"ErrSize16385", LinkRequest{Context: contextOfSize(t, 16385, 'a')}, []string{"context|too_large"}},
		{"OKSize16384Euro", LinkRequest{Context: contextOfSize(t, 16384, '€')}, nil},
		{"ErrSize16385Euro", LinkRequest{Context: contextOfSize(t, 16385, '€')}, []string{"context|too_large"}},
		{"OKSize16384Emoji", LinkRequest{Context: contextOfSize(t, 16384, '😀')}, nil},
		{"ErrSize16385Emoji", LinkRequest{Context: contextOfSize(t, 16385, '😀')}, []string{"context|too_large"}},
		{"ErrSizeEscapesCount", LinkRequest{Context: map[string]string{"a": rep("\x01", 2048), "b": rep("\x01", 2048)}}, []string{"context|too_large"}},
		{
			"ErrEveryViolationSorted",
			LinkRequest{
				Context: func() map[string]string {
					c := keys(19)
					c["zz\x01"] = "v"
					c["Token"] = rep("x", 2049) + "\x00"
					c[""] = "v"
					return c
				}(),
				Audience: "all",
				Note:     rep("n", 2049) + "\x00",
			},
			[]string{
				"context|too_many_keys",
				"context.|string_too_short",
				"context.Token|reserved_key",
				"context.Token|string_too_long",
				"context.Token|null_character",
				"context.zz\x01|control_character",
				"audience|enum",
				"note|string_too_long",
				"note|null_character",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ValidateLinkRequest(tt.req)
			if v := violations(t, err); !slices.Equal(v, tt.want) {
				t.Fatalf("violations = %q, want %q", v, tt.want)
			}
			if err != nil {
				if got.Audience != "" || got.Note != "" || got.Context != nil {
					t.Errorf("invalid request returned a non-zero LinkRequest: %+v", got)
				}
				return
			}
			wantAudience := tt.req.Audience
			if wantAudience == "" {
				wantAudience = AudienceGroup
			}
			if got.Audience != wantAudience {
				t.Errorf("Audience = %q, want %q", got.Audience, wantAudience)
			}
			if got.Note != strings.TrimSpace(tt.req.Note) {
				t.Errorf("Note = %q, want it trimmed", got.Note)
			}
			if len(got.Context) != len(tt.req.Context) {
				t.Errorf("Context has %d keys, want %d", len(got.Context), len(tt.req.Context))
			}
		})
	}
}

func TestValidateLinkRequestErrorDetails(t *testing.T) {
	secret := "ſecret-Ṽalue"
	_, err := ValidateLinkRequest(LinkRequest{
		Context:  map[string]string{"TOKEN": secret + "\x00", strings.Repeat(secret, 20): "v"},
		Audience: secret,
		Note:     secret + "\x00",
	})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if e.Reason != "validation_error" {
		t.Errorf("Reason = %q, want validation_error", e.Reason)
	}
	wantCtx := map[string]map[string]any{
		"string_too_long": {"max_length": LinkContextKeyMaxChars},
		"enum":            {"expected": "'group' or 'person'"},
	}
	for _, f := range e.Fields {
		if f.Msg == "" || !strings.HasSuffix(f.Msg, ".") {
			t.Errorf("%v: message %q is not a sentence", f.Loc, f.Msg)
		}
		if strings.Contains(f.Msg, "ecret") || strings.Contains(fmt.Sprint(f.Ctx), "ecret") {
			t.Errorf("%v: message or ctx echoes the input: %q %v", f.Loc, f.Msg, f.Ctx)
		}
		if want, ok := wantCtx[f.Type]; ok && fmt.Sprint(f.Ctx) != fmt.Sprint(want) {
			t.Errorf("%v %s: ctx = %v, want %v", f.Loc, f.Type, f.Ctx, want)
		}
	}
	if len(e.Fields) != 5 {
		t.Errorf("got %d field errors, want 5: %v", len(e.Fields), e)
	}
}

func TestValidateLinkRequestLimitCtx(t *testing.T) {
	tests := []struct {
		name    string
		req     LinkRequest
		typ     string
		wantCtx string
	}{
		{"ErrTooManyKeys", LinkRequest{Context: keys(21)}, "too_many_keys", "map[max_keys:20]"},
		{"ErrTooLarge", LinkRequest{Context: contextOfSize(t, 16385, 'a')}, "too_large", "map[max_bytes:16384]"},
		{"ErrEmptyKey", LinkRequest{Context: map[string]string{"": "v"}}, "string_too_short", "map[min_length:1]"},
		{"ErrLongValue", LinkRequest{Context: map[string]string{"a": strings.Repeat("v", 2049)}}, "string_too_long", "map[max_length:2048]"},
		{"ErrLongNote", LinkRequest{Note: strings.Repeat("v", 2049)}, "string_too_long", "map[max_length:2048]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ValidateLinkRequest(tt.req)
			var e *Error
			if !errors.As(err, &e) || len(e.Fields) != 1 {
				t.Fatalf("err = %v, want one field error", err)
			}
			if f := e.Fields[0]; f.Type != tt.typ || fmt.Sprint(f.Ctx) != tt.wantCtx {
				t.Errorf("got %s %v, want %s %s", f.Type, f.Ctx, tt.typ, tt.wantCtx)
			}
		})
	}
}

func TestReservedContextKey(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{"token", true}, {"TOKEN", true}, {"Link", true}, {"ſtudy", true}, {"STUDY_ID", true},
		{"interview", true}, {"Interview_Id", true}, {"MODE", true}, {"lang", true},
		{"preview", true}, {"Test", true}, {"audience", true}, {"NOTE", true},
		{"context", true}, {"ſig", true}, {"expires", true}, {"lin\u212a", true},
		{"tokens", false}, {"tok", false}, {"", false}, {"study id", false},
		{"lınk", false}, // dotless i does not fold to i
		{"token\x00", false}, {"segment", false},
	}
	for _, tt := range tests {
		if got := ReservedContextKey(tt.key); got != tt.want {
			t.Errorf("ReservedContextKey(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

func TestContextEncodedSize(t *testing.T) {
	tests := []struct {
		name string
		ctx  map[string]string
	}{
		{"Nil", nil},
		{"Empty", map[string]string{}},
		{"OneEmptyPair", map[string]string{"": ""}},
		{"Quotes", map[string]string{`k"`: `say "hi"`}},
		{"Backslashes", map[string]string{`a\b`: `C:\dir\`}},
		{"ShortEscapes", map[string]string{"a": "\b\f\n\r\t"}},
		{"OtherControls", map[string]string{"a": "\x00\x01\x1f\x7f"}},
		{"C1Control", map[string]string{"a": "\u0085\u009f"}},
		{"HTMLCharacters", map[string]string{"<a>": "&<>"}},
		{"Emoji", map[string]string{"😀": "👩‍👩‍👧 and 🇮🇹"}},
		{"MultiByte", map[string]string{"é": "€ ü 日本語"}},
		{"ReplacementChar", map[string]string{"a": "\ufffd"}},
		{"ManyKeys", keys(20)},
		{"Mixed", map[string]string{"a": "x\"\\\n\x02€😀", "b": "", "c\t": "\u2028"}},
		{"LineSeparators", map[string]string{"\u2028": "\u2029\u2029"}},
		{"InvalidUTF8", map[string]string{"a\xff": "\xc3\x28 \xed\xa0\x80"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := referenceEncodedSize(t, tt.ctx)
			if got := contextEncodedSize(tt.ctx); got != want {
				t.Errorf("contextEncodedSize = %d, want %d", got, want)
			}
		})
	}
	t.Run("LineSeparatorIsThreeBytes", func(t *testing.T) {
		// {"a":"\u2028"} with the character raw: 2 + 3 + 1 + 2 + 3 bytes.
		if got := contextEncodedSize(map[string]string{"a": "\u2028"}); got != 11 {
			t.Errorf("got %d, want 11", got)
		}
	})
	t.Run("MatchesEncodingJSONWithoutSeparators", func(t *testing.T) {
		ctx := map[string]string{"q\"": "\\\x00\x1f\b😀€<&>", "k": "plain"}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(ctx); err != nil {
			t.Fatal(err)
		}
		if got, want := contextEncodedSize(ctx), buf.Len()-1; got != want {
			t.Errorf("got %d, encoding/json wrote %d", got, want)
		}
	})
}

// foldKey maps every rune of s to the smallest member of its simple case folding orbit,
// an independent way to compare strings case-insensitively.
func foldKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b.WriteRune(m)
	}
	return b.String()
}

// linkRequestViolated reports, independently of the validator, whether r breaks a rule.
func linkRequestViolated(tb testing.TB, r LinkRequest) (bool, string) {
	tb.Helper()
	if len(r.Context) > 20 {
		return true, "too many keys"
	}
	if size := referenceEncodedSize(tb, r.Context); size > 16384 {
		return true, "too large"
	}
	for k, v := range r.Context {
		if len([]rune(k)) == 0 || len([]rune(k)) > 100 {
			return true, "key length"
		}
		for _, c := range k {
			if unicode.Is(unicode.Cc, c) {
				return true, "key control"
			}
		}
		for _, res := range []string{"token", "link", "study", "study_id", "interview", "interview_id", "mode", "lang", "preview", "test", "audience", "note", "context", "sig", "expires"} {
			if foldKey(k) == foldKey(res) {
				return true, "reserved"
			}
		}
		if len([]rune(v)) > 2048 || strings.ContainsRune(v, 0) {
			return true, "value"
		}
	}
	if r.Audience != "" && r.Audience != "group" && r.Audience != "person" {
		return true, "audience"
	}
	note := strings.TrimSpace(r.Note)
	if len([]rune(note)) > 2048 || strings.ContainsRune(note, 0) {
		return true, "note"
	}
	return false, ""
}

func FuzzValidateLinkRequest(f *testing.F) {
	f.Add("segment", "b2b", "", "", uint8(0), uint16(1), "", "be kind")
	f.Add("ſtudy", "x", "TOKEN", "y", uint8(3), uint16(2), "person", "  note  ")
	f.Add("a\x01", "x\x00", "é", "€", uint8(19), uint16(400), "group", "\x00")
	f.Add("k", strings.Repeat("😀", 10), "lin\u212a", "\u2028", uint8(25), uint16(205), "Group", strings.Repeat(" ", 3000))
	f.Add(strings.Repeat("é", 100), "v", "kk", "w", uint8(18), uint16(2048), "person", " "+strings.Repeat("€", 2048)+"\n")
	f.Add("\xff", "\xc3\x28", "q\"", "\\", uint8(7), uint16(2048), "", "\u3000x\u3000")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string, extra uint8, rep uint16, audience, note string) {
		ctx := map[string]string{k1: strings.Repeat(v1, int(rep%2100)), k2: v2}
		for i := range int(extra % 24) {
			ctx[fmt.Sprintf("extra%02d", i)] = v2
		}
		req := LinkRequest{Context: ctx, Audience: audience, Note: note}
		if referenceEncodedSize(t, ctx) < 0 {
			t.Skip("keys collide after UTF-8 repair")
		}
		violated, why := linkRequestViolated(t, req)
		got, err := ValidateLinkRequest(req)
		v := violations(t, err)
		if err == nil && violated {
			t.Fatalf("accepted a request that breaks a rule (%s)", why)
		}
		if err != nil && !violated {
			t.Fatalf("refused a valid request: %q", v)
		}
		if err != nil {
			return
		}
		if got.Note != strings.TrimSpace(note) {
			t.Fatalf("note not trimmed: %q", got.Note)
		}
		if got.Audience != "group" && got.Audience != "person" {
			t.Fatalf("audience = %q", got.Audience)
		}
		if size := contextEncodedSize(got.Context); size != referenceEncodedSize(t, got.Context) {
			t.Fatalf("size %d differs from reference %d", size, referenceEncodedSize(t, got.Context))
		}
	})
}
