package server

import (
	"reflect"
	"testing"
)

// FuzzReadTag: a tag read once answers every key as StructTag.Lookup does.
func FuzzReadTag(f *testing.F) {
	f.Add(`json:"study_id" required:"true" doc:"The study \"x\"."`, "doc")
	f.Add(`path:"study_id" doc:"The study to refine."`, "path")
	f.Add(`query:"limit" min:"1" max:"200" default:"50"`, "max")
	f.Add(`json:"a"json:"b"`, "json")
	f.Add(`bad: "x" json:"y"`, "json")
	f.Add(`json:"unterminated`, "json")
	f.Fuzz(func(t *testing.T, tag, key string) {
		st := reflect.StructTag(tag)
		pairs := readTag(st)
		for _, k := range []string{key, "json", "path", "query", "required", "enum", "min", "max", "minLength", "maxLength", "doc"} {
			if got, want := pairs.get(k), st.Get(k); got != want {
				t.Fatalf("tag %q key %q: readTag %q, StructTag.Get %q", tag, k, got, want)
			}
		}
	})
}

// TestReadTagOnEveryOperation: every operation's input fields read the same through
// readTag as through StructTag.Get.
func TestReadTagOnEveryOperation(t *testing.T) {
	s := &Server{}
	n := 0
	for _, o := range s.operations() {
		for i := 0; i < o.in.NumField(); i++ {
			f := o.in.Field(i)
			pairs := readTag(f.Tag)
			for _, k := range []string{"json", "path", "query", "required", "enum", "min", "max", "minLength", "maxLength", "doc", "default"} {
				if got, want := pairs.get(k), f.Tag.Get(k); got != want {
					t.Errorf("%s.%s %q: readTag %q, StructTag.Get %q", o.Name, f.Name, k, got, want)
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no operation has an input field")
	}
}
