package jsontext

import (
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

func TestDecodeString(t *testing.T) {
	tests := []struct {
		name, in, want, wantErr string
	}{
		{"OKPlain", `"abc"`, "abc", ""},
		{"OKEscapes", `"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t", ""},
		{"OKUnicode", `"\u00e9\u20ac"`, "é€", ""},
		{"OKSurrogatePair", `"\ud83d\ude00"`, "😀", ""},
		{"OKLoneHigh", `"\ud83dx"`, "\ufffdx", ""},
		{"OKLoneLow", `"\ude00"`, "\ufffd", ""},
		{"OKHighThenNonLow", `"\ud83d\u0041"`, "\ufffdA", ""},
		{"OKRawUTF8", `"zoë"`, "zoë", ""},
		{"ErrUnterminated", `"abc`, "", "unexpected end"},
		{"ErrControl", "\"a\nb\"", "", "control character"},
		{"ErrBadEscape", `"\q"`, "", "bad escape"},
		{"ErrShortUnicode", `"\u12"`, "", `\u escape`},
		{"ErrNotString", `abc`, "", "want string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, end, err := DecodeString(nil, []byte(tc.in), 0)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("DecodeString = %q, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || string(got) != tc.want || end != len(tc.in) {
				t.Fatalf("DecodeString = %q, %d, %v; want %q, %d", got, end, err, tc.want, len(tc.in))
			}
		})
	}
}

func TestAppendString(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"Plain", "abc", `"abc"`},
		{"Escapes", "a\"b\\c\nd\re\tf\x01", `"a\"b\\c\nd\re\tf\u0001"`},
		{"UTF8Kept", "é😀", `"é😀"`},
		{"InvalidUTF8Copied", "a\xffb\xc3", "\"a\xffb\xc3\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(AppendString(nil, []byte(tc.in))); got != tc.want {
				t.Fatalf("AppendString(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestSkipValue(t *testing.T) {
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"OKObject", `{"a":[1,2.5,-0.1e+3,true,false,null,"x"],"b":{}}`, true},
		{"OKSpaces", " [ 1 , { \"a\" : [ ] } ] ", true},
		{"ErrTrailingComma", `[1,]`, false},
		{"ErrLeadingZero", `01`, false},
		{"ErrBareDot", `1.`, false},
		{"ErrExponent", `1e`, false},
		{"ErrKeyNotString", `{1:2}`, false},
		{"ErrLiteral", `nul`, false},
		{"ErrEmpty", ``, false},
		{"ErrTooDeep", strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), false},
		{"OKDeepestAllowed", strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			end, err := SkipValue([]byte(tc.in), 0)
			if err == nil {
				err = EndOfLine([]byte(tc.in), end)
			}
			if (err == nil) != tc.ok {
				t.Fatalf("SkipValue(%q) = %v, want ok=%v", tc.in, err, tc.ok)
			}
		})
	}
}

func TestMember(t *testing.T) {
	tests := []struct {
		name, line, key, want string
		found                 bool
		wantErr               bool
	}{
		{"OKFound", `{"config":{"a":1},"x":2}`, "config", `{"a":1}`, true, false},
		{"OKFirstWins", `{"k":1,"k":2}`, "k", `1`, true, false},
		{"OKAbsent", `{"x":2}`, "config", "", false, false},
		{"OKEmpty", ` {} `, "config", "", false, false},
		{"ErrArray", `[1]`, "config", "", false, true},
		{"ErrTrailing", `{"config":1}{}`, "config", "", false, true},
		{"ErrTruncated", `{"config":1`, "config", "", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw, found, err := Member([]byte(tc.line), tc.key)
			if (err != nil) != tc.wantErr || found != tc.found || string(raw) != tc.want {
				t.Fatalf("Member = %q, %v, %v; want %q, %v, error %v", raw, found, err, tc.want, tc.found, tc.wantErr)
			}
		})
	}
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 100<<10) // longer than the bufio buffer
	lr := NewLineReader(strings.NewReader("a\r\n\n  \nb\n"+long+"\nc"), 200<<10)
	var got []string
	for {
		line, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(line))
	}
	want := []string{"a", "b", long, "c"}
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("line %d = %.20q..., want %.20q...", i, got[i], want[i])
		}
	}
	if lr.Line() != 6 {
		t.Fatalf("Line() = %d, want 6", lr.Line())
	}

	lr = NewLineReader(strings.NewReader(long+"\n"), 1000)
	if _, err := lr.Next(); err == nil || !strings.Contains(err.Error(), "longer than 1000") {
		t.Fatalf("Next on a long line = %v, want a length error", err)
	}
}

// FuzzSkipValue checks that SkipValue accepts exactly what encoding/json calls valid
// (within MaxDepth).
func FuzzSkipValue(f *testing.F) {
	for _, s := range []string{`{"a":[1,"b",null]}`, `-0.5e-7`, `"\u00e9"`, `[`, `{"a" 1}`, `tru`, `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		end, err := SkipValue(data, 0)
		if err == nil {
			err = EndOfLine(data, end)
		}
		if err != nil && strings.Contains(err.Error(), "nested deeper") {
			return
		}
		if want := json.Valid(data); (err == nil) != want {
			t.Fatalf("SkipValue(%q) = %v, json.Valid = %v", data, err, want)
		}
	})
}

// FuzzString checks DecodeString against encoding/json and that AppendString output
// decodes back to the same text.
func FuzzString(f *testing.F) {
	for _, s := range []string{`"a"`, `"\ud83d\ude00"`, `"\ud83d"`, "\"\xff\"", `"\u0000\\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, end, err := DecodeString(nil, data, 0)
		var want string
		jsonErr := json.Unmarshal(data, &want)
		if err == nil {
			err = EndOfLine(data, end)
		}
		if len(data) > 0 && data[0] == '"' && (err == nil) != (jsonErr == nil) {
			t.Fatalf("DecodeString(%q) = %v, json.Unmarshal = %v", data, err, jsonErr)
		}
		if err == nil && toValid(got) != want {
			t.Fatalf("DecodeString(%q) = %q, json.Unmarshal = %q", data, got, want)
		}
		// Round trip: anything encoded decodes back to itself.
		enc := AppendString(nil, data)
		back, end, err := DecodeString(nil, enc, 0)
		if err != nil || end != len(enc) || string(back) != string(data) {
			t.Fatalf("AppendString(%q) = %s does not decode back (%q, %v)", data, enc, back, err)
		}
	})
}

// toValid replaces each invalid UTF-8 byte with U+FFFD, as encoding/json does.
func toValid(b []byte) string {
	var s strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			s.WriteString("\ufffd")
		} else {
			s.Write(b[:size])
		}
		b = b[size:]
	}
	return s.String()
}

// FuzzLineReader reads arbitrary input through readers that return few bytes at a
// time and checks the lines against a plain split.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nb\r\n\n  \nc"), uint8(3))
	f.Add([]byte("{\"config\":{}}\n"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		var want []string
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSuffix(line, "\r")
			if SkipSpace([]byte(line), 0) < len(line) {
				want = append(want, line)
			}
		}
		lr := NewLineReader(iotest.HalfReader(&chunkReader{data: data, n: int(chunk%7) + 1}), len(data)+1)
		var got []string
		for {
			line, err := lr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(line))
		}
		if len(got) != len(want) {
			t.Fatalf("got %d lines %q, want %q", len(got), got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("line %d = %q, want %q", i, got[i], want[i])
			}
		}
	})
}

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.data)
	c.data = c.data[k:]
	return k, nil
}

// FuzzRawString checks RawString against a byte-at-a-time reading of the same rule.
func FuzzRawString(f *testing.F) {
	f.Add([]byte(`"plain text that runs on past thirty-two bytes of input \n\"quoted\" end" tail`))
	f.Add([]byte(`"0123456789012345678901234567890\n"`))
	f.Add([]byte(`"` + strings.Repeat("a", 62) + `\"` + strings.Repeat("b", 70) + `\\"`)) // an escape across the first block's end
	f.Add([]byte(`"` + strings.Repeat("a", 63) + `\n"`))
	f.Add([]byte(`"bad \u0041 escape"`))
	f.Add([]byte("\"raw \x01 control\""))
	f.Add([]byte(`"no end \`))
	f.Fuzz(func(t *testing.T, s []byte) {
		for start := 0; start <= len(s); start++ {
			wantEnd, wantEsc, wantOK := -1, []int(nil), false
			for p := start; p < len(s); p++ {
				c := s[p]
				if c == '"' {
					wantEnd, wantOK = p, true
					break
				}
				if c < 0x20 || (c == '\\' && (p+1 >= len(s) || !shortEscape[s[p+1]])) {
					break
				}
				if c == '\\' {
					wantEsc = append(wantEsc, p)
					p++
				}
			}
			end, esc, ok := RawString(s, start, nil)
			if ok != wantOK || (ok && (end != wantEnd || !slices.Equal(esc, wantEsc))) {
				t.Fatalf("RawString(%q, %d) = %d, %v, %v; want %d, %v, %v", s, start, end, esc, ok, wantEnd, wantEsc, wantOK)
			}
		}
	})
}
