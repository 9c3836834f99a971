package template

import (
	"strings"
	"testing"
)

type row struct {
	ID    int
	Tags  map[string]int
	Inner *row
}

func (r row) Label() string { return "label" }

// TestFieldsKeysAndSortedMaps: fields (through pointers), map keys and range over a map
// in key order (the copied fmtsort) work as in the standard library.
func TestFieldsKeysAndSortedMaps(t *testing.T) {
	r := &row{ID: 1, Tags: map[string]int{"b": 2, "a": 1, "c": 3}, Inner: &row{ID: 7}}
	var b strings.Builder
	src := `{{.ID}} {{.Inner.ID}} {{.Tags.b}} {{range $k, $v := .Tags}}{{$k}}{{$v}}{{end}} {{range $k, $v := .Ints}}{{$k}}{{end}}`
	data := map[string]any{"ID": r.ID, "Inner": r.Inner, "Tags": r.Tags, "Ints": map[int]bool{3: true, -1: true, 2: true}}
	if err := Must(New("t").Parse(src)).Execute(&b, data); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "1 7 2 a1b2c3 -123"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	b.Reset()
	if err := Must(New("t").Parse(`{{.Inner.ID}}`)).Execute(&b, r); err != nil || b.String() != "7" {
		t.Errorf("got %q, %v", b.String(), err)
	}
}

// TestMethodNotCalled: a name that is only a method is an execution error naming it,
// with a hint that templates never call methods.
func TestMethodNotCalled(t *testing.T) {
	for _, data := range []any{row{}, &row{}} {
		var b strings.Builder
		err := Must(New("t").Parse(`x{{.Label}}`)).Execute(&b, data)
		if err == nil || !strings.Contains(err.Error(), "can't evaluate field Label") || !strings.Contains(err.Error(), "never methods") {
			t.Errorf("%T: err = %v", data, err)
		}
		if strings.Contains(b.String(), "label") {
			t.Errorf("%T: the method ran: %q", data, b.String())
		}
	}
}
