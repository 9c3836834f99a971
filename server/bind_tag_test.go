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
	f.Add(`doc:"user\'s" json:"x" required:"true"`, "json")
	f.Add(`doc:"\z" min:"1"`, "min")
	f.Add(`doc:"\400" enum:"a,b"`, "enum")
	f.Add("doc:\"a\nb\" json:\"x\"", "json")
	f.Add(`json:"\z" json:"y"`, "json")
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

// TestReadTagOnEveryInput: every input planInput plans (the operations', the
// participant message's, the access API's) reads the same through readTag as through
// StructTag.Get.
func TestReadTagOnEveryInput(t *testing.T) {
	s := &Server{}
	inputs := map[string]reflect.Type{"ParticipantMessageInput": reflect.TypeFor[ParticipantMessageInput]()}
	for _, o := range s.operations() {
		inputs[o.Name] = o.in
	}
	for _, rt := range (&accessSide{s: s}).routes() {
		if rt.In != nil {
			inputs[rt.Method+" "+rt.Path] = rt.In
		}
	}
	n := 0
	for name, in := range inputs {
		for i := 0; i < in.NumField(); i++ {
			f := in.Field(i)
			pairs := readTag(f.Tag)
			for _, k := range []string{"json", "path", "query", "required", "enum", "min", "max", "minLength", "maxLength", "doc", "default"} {
				if got, want := pairs.get(k), f.Tag.Get(k); got != want {
					t.Errorf("%s.%s %q: readTag %q, StructTag.Get %q", name, f.Name, k, got, want)
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no input has a field")
	}
}
