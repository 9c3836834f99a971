package csvformat

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
)

func TestAppendCell(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"Plain", "hello", "hello"},
		{"Empty", "", ""},
		{"Comma", "a,b", `"a,b"`},
		{"Quote", `say "hi"`, `"say ""hi"""`},
		{"Newline", "a\nb", "\"a\nb\""},
		{"CR", "a\rb", "\"a\rb\""},
		{"Unicode", "zoë 😀", "zoë 😀"},
		{"InjectionEquals", "=SUM(A1:A2)", "'=SUM(A1:A2)"},
		{"InjectionPlus", "+1 555", "'+1 555"},
		{"InjectionMinus", "-5", "'-5"},
		{"InjectionAt", "@cmd", "'@cmd"},
		{"InjectionTab", "\tx", "'\tx"},
		{"InjectionCRQuoted", "\rx", "\"'\rx\""},
		{"InjectionAndQuote", `=HYPERLINK("http://x")`, `"'=HYPERLINK(""http://x"")"`},
		{"InjectionAndComma", "=1,2", `"'=1,2"`},
		{"TriggerNotFirst", "a=b", "a=b"},
		{"LeadingSpaceKept", " =x", " =x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(AppendCell(nil, []byte(tc.in))); got != tc.want {
				t.Fatalf("AppendCell(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name, in, want, wantErr string
	}{
		{"OKHeaderAndRows",
			"{\"config\":{}}\n{\"cells\":[\"id\",\"note\"]}\n{\"cells\":[\"1\",\"a, b\"]}\n{\"cells\":[\"2\",\"=cmd\"]}\n",
			"id,note\r\n1,\"a, b\"\r\n2,'=cmd\r\n", ""},
		{"OKScalars", "{\"config\":null}\n{\"cells\":[1.5,true,null,\"\"]}\n", "1.5,true,,\r\n", ""},
		{"OKSingleEmptyCell", "{\"config\":{}}\n{\"cells\":[\"\"]}\n", "\"\"\r\n", ""},
		{"OKEscapes", "{\"config\":{}}\n{\"cells\":[\"a\\nb\",\"\\u00e9\"]}\n", "\"a\nb\",é\r\n", ""},
		{"OKNoRows", "{\"config\":{}}\n", "", ""},
		{"ErrNoInput", "", "", "no input"},
		{"ErrNoConfig", "{\"cells\":[]}\n", "", "first line"},
		{"ErrWidth", "{\"config\":{}}\n{\"cells\":[\"a\",\"b\"]}\n{\"cells\":[\"1\"]}\n", "", "row 2 has 1 cells, the header has 2"},
		{"ErrNoCells", "{\"config\":{}}\n{\"id\":1}\n", "", `no "cells"`},
		{"ErrCellsNotArray", "{\"config\":{}}\n{\"cells\":{}}\n", "", "not an array"},
		{"ErrNestedCell", "{\"config\":{}}\n{\"cells\":[[1]]}\n", "", "cell 1 is not a string"},
		{"ErrBadJSON", "{\"config\":{}}\n{\"cells\":[\"a\"\n", "", "row 1"},
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
				t.Fatalf("Run wrote %q, want %q", out.String(), tc.want)
			}
		})
	}
}

// FuzzCSVCell writes a row around an arbitrary cell through the whole formatter and
// re-reads it with encoding/csv: the field count survives, the cell comes back as
// written (after its apostrophe, if it needed one), and no field starts with a trigger.
func FuzzCSVCell(f *testing.F) {
	for _, s := range []string{"plain", "=1+1", "a,b", `"q"`, "line\nbreak", "\r", "-", "@x", "\t", "", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cell string) {
		row, err := json.Marshal(map[string][]string{"cells": {"a", cell, "z"}})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		in := "{\"config\":{}}\n" + `{"cells":["h1","h2","h3"]}` + "\n" + string(row) + "\n"
		if err := Run(strings.NewReader(in), &out); err != nil {
			t.Fatalf("Run: %v", err)
		}
		records, err := csv.NewReader(&out).ReadAll()
		if err != nil {
			t.Fatalf("encoding/csv cannot read %q: %v", out.String(), err)
		}
		if len(records) != 2 || len(records[1]) != 3 {
			t.Fatalf("read back %q, want 2 records of 3 fields", records)
		}
		got := records[1][1]
		for _, rec := range records {
			for _, field := range rec {
				if field != "" && isTrigger(field[0]) {
					t.Fatalf("field %q starts with a formula trigger", field)
				}
			}
		}
		// json.Marshal made the cell valid UTF-8; encoding/csv turns \r\n into \n.
		var back struct {
			Cells []string `json:"cells"`
		}
		if err := json.Unmarshal(row, &back); err != nil {
			t.Fatal(err)
		}
		want := back.Cells[1]
		if want != "" && isTrigger(want[0]) {
			want = "'" + want
		}
		want = strings.ReplaceAll(want, "\r\n", "\n")
		if got != want {
			t.Fatalf("cell %q read back as %q, want %q", cell, got, want)
		}
	})
}
