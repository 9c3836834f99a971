package redact

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestRecord(t *testing.T) {
	r := mustRedactor(t, DefaultConfig())
	tests := []struct {
		name, in, want, wantErr string
	}{
		{"OKCellsObject",
			`{"id":"i1","cells":{"transcript":"mail a@b.io","age":"42"}}`,
			`{"id":"i1","cells":{"transcript":"mail [EMAIL]","age":"42"}}`, ""},
		{"OKIDAndKeysUntouched",
			`{"id":"a@b.io","cells":{"a@b.io":"a@b.io"}}`,
			`{"id":"a@b.io","cells":{"a@b.io":"[EMAIL]"}}`, ""},
		{"OKNestedAndNonStrings",
			`{"cells":{"list":["a@b.io",1,true,null,{"k":"10.0.0.1"}],"n":-1.5e3}}`,
			`{"cells":{"list":["[EMAIL]",1,true,null,{"k":"[IP]"}],"n":-1.5e3}}`, ""},
		{"OKCellsArray", `{"cells":["555-123-4567"]}`, `{"cells":["[PHONE]"]}`, ""},
		{"OKWhitespaceDropped", ` { "cells" : { "a" : "x" } , "id" : 7 } `, `{"cells":{"a":"x"},"id":7}`, ""},
		{"OKEscapesKept",
			`{"cells":{"a":"line\nbreak \"q\" \u00e9 \ud83d\ude00 a@b.io"}}`,
			`{"cells":{"a":"line\nbreak \"q\" é 😀 [EMAIL]"}}`, ""},
		{"OKEscapedAddress", `{"cells":{"a":"jane\u0040example.com"}}`, `{"cells":{"a":"[EMAIL]"}}`, ""},
		{"OKEmpty", `{}`, `{}`, ""},
		{"OKNoCells", `{"id":"x"}`, `{"id":"x"}`, ""},
		{"ErrArray", `["a"]`, "", "not a JSON object"},
		{"ErrTrailing", `{"cells":{}} x`, "", "want end of line"},
		{"ErrTruncated", `{"cells":{"a":"b`, "", "unexpected end"},
		{"ErrBadEscape", `{"cells":{"a":"\x"}}`, "", "bad escape"},
		{"ErrMissingColon", `{"cells" {}}`, "", "want ':'"},
		{"ErrTooDeep", `{"cells":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`, "", "nested deeper"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Record(nil, []byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Record = %q, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("Record\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name, in, want, wantErr string
	}{
		{"OKDefaults",
			"{\"config\":{}}\n{\"id\":\"1\",\"cells\":{\"t\":\"a@b.io\"}}\n\n{\"id\":\"2\",\"cells\":{\"t\":\"ok\"}}\r\n",
			"{\"id\":\"1\",\"cells\":{\"t\":\"[EMAIL]\"}}\n{\"id\":\"2\",\"cells\":{\"t\":\"ok\"}}\n", ""},
		{"OKConfigOff",
			"{\"config\":{\"email\":false}}\n{\"cells\":{\"t\":\"a@b.io\"}}",
			"{\"cells\":{\"t\":\"a@b.io\"}}\n", ""},
		{"OKCustomPattern",
			"{\"config\":{\"patterns\":[{\"name\":\"employee_id\",\"regex\":\"E\\\\d{6}\"}]}}\n{\"cells\":{\"t\":\"E123456\"}}\n",
			"{\"cells\":{\"t\":\"[EMPLOYEE_ID]\"}}\n", ""},
		{"OKNoRecords", "{\"config\":null}\n", "", ""},
		{"ErrNoInput", "", "", "first line"},
		{"ErrNoConfig", "{\"cells\":{}}\n", "", "first line"},
		{"ErrBadPattern", "{\"config\":{\"patterns\":[{\"name\":\"X\",\"regex\":\"(\"}]}}\n", "", "pattern X"},
		{"ErrBadRecord", "{\"config\":{}}\n{\"cells\":{}}\nnope\n", "", "line 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := Run(strings.NewReader(tc.in), &out)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Run = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Fatalf("Run wrote\n%q\nwant\n%q", out.String(), tc.want)
			}
		})
	}
}

// failingWriter fails every write, as a closed stdout would.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestRunWriteFailure(t *testing.T) {
	err := Run(strings.NewReader("{\"config\":{}}\n{\"cells\":{}}\n"), failingWriter{})
	if err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Fatalf("Run = %v, want the write error", err)
	}
}

func TestRunLongLine(t *testing.T) {
	long := `{"cells":{"t":"` + strings.Repeat("a", MaxLine) + `"}}`
	err := Run(strings.NewReader("{\"config\":{}}\n"+long+"\n"), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("Run = %v, want a line-length error", err)
	}
}
