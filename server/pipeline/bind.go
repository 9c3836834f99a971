package pipeline

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"interviewd/kv"
)

// Where an input field comes from on REST. MCP and A2A take every field from one JSON
// arguments object, but report the same loc so both surfaces refuse alike.
type fieldSource int

const (
	SrcBody fieldSource = iota
	SrcPath
	SrcQuery
)

func (s fieldSource) String() string {
	switch s {
	case SrcPath:
		return "path"
	case SrcQuery:
		return "query"
	}
	return "body"
}

// fieldPlan is what reflection learned about one input field, once, at start-up.
// Struct tags: path:"x" / query:"x" (else a JSON body field named by its json tag),
// required:"true", enum:"a,b", min:"1", max:"200", minLength:"1", maxLength:"2000",
// and, for documents only, doc:"...", default:"...", docEnum, the doc* bounds and
// component (schema.go).
type fieldPlan struct {
	index          int
	Name           string
	Src            fieldSource
	Typ            reflect.Type
	tag            reflect.StructTag
	Required       bool
	enum           []string
	min, max       *int
	minLen, maxLen int
}

type InputPlan struct {
	Fields  []fieldPlan
	HasBody bool
}

var IDType = reflect.TypeFor[kv.ID]()

func PlanInput(t reflect.Type) *InputPlan {
	p := &InputPlan{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || f.Tag.Get("json") == "-" {
			continue // filled by a surface (an upload's stream, the app's form), never from the wire
		}
		fp := fieldPlan{index: i, Typ: f.Type, tag: f.Tag}
		tag := f.Tag
		switch path, query := tag.Get("path"), tag.Get("query"); {
		case path != "":
			fp.Src, fp.Name = SrcPath, path
		case query != "":
			fp.Src, fp.Name = SrcQuery, query
		default:
			fp.Src, fp.Name = SrcBody, strings.Split(tag.Get("json"), ",")[0]
			p.HasBody = true
		}
		if fp.Name == "" || fp.Name == "-" {
			panic(fmt.Sprintf("input %s field %s has no wire name", t, f.Name))
		}
		fp.Required = tag.Get("required") == "true" || fp.Src == SrcPath
		if e := tag.Get("enum"); e != "" {
			fp.enum = strings.Split(e, ",")
		}
		fp.min = intTag(tag.Get("min"))
		fp.max = intTag(tag.Get("max"))
		if m := intTag(tag.Get("minLength")); m != nil {
			fp.minLen = *m
		}
		if m := intTag(tag.Get("maxLength")); m != nil {
			fp.maxLen = *m
		}
		p.Fields = append(p.Fields, fp)
	}
	return p
}

func intTag(s string) *int {
	if s == "" {
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		panic("bad int tag " + s)
	}
	return &n
}

func (fp *fieldPlan) loc(rest ...any) []any {
	return append([]any{fp.Src.String(), fp.Name}, rest...)
}

// setString sets a path or query field from its raw text.
func (fp *fieldPlan) setString(v reflect.Value, raw string) *kv.FieldError {
	t := fp.Typ
	if t.Kind() == reflect.Pointer {
		ptr := reflect.New(t.Elem())
		if fe := (&fieldPlan{Name: fp.Name, Src: fp.Src, Typ: t.Elem()}).setString(ptr.Elem(), raw); fe != nil {
			return fe
		}
		v.Set(ptr)
		return nil
	}
	switch {
	case t == IDType:
		id, ok := kv.ParseID(raw)
		if !ok {
			return &kv.FieldError{Loc: fp.loc(), Msg: "Input should be a valid UUID.", Type: "uuid_parsing"}
		}
		v.Set(reflect.ValueOf(id))
	case t.Kind() == reflect.String:
		if fe := CheckText(raw, fp.loc()); fe != nil {
			return fe
		}
		v.SetString(raw)
	case t.Kind() == reflect.Int:
		n, err := strconv.Atoi(raw)
		if err != nil {
			return &kv.FieldError{Loc: fp.loc(), Msg: "Input should be a valid integer.", Type: "int_parsing"}
		}
		v.SetInt(int64(n))
	case t.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return &kv.FieldError{Loc: fp.loc(), Msg: "Input should be a valid boolean.", Type: "bool_parsing"}
		}
		v.SetBool(b)
	default:
		panic("unsupported path/query field type " + t.String())
	}
	return nil
}

// setJSON sets a field from its raw JSON value.
func (fp *fieldPlan) setJSON(v reflect.Value, raw json.RawMessage) []kv.FieldError {
	return decodeJSONValue(v, fp.Typ, raw, fp.loc())
}

func decodeJSONValue(v reflect.Value, t reflect.Type, raw json.RawMessage, loc []any) []kv.FieldError {
	raw = bytes.TrimSpace(raw)
	isNull := bytes.Equal(raw, []byte("null"))
	if t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		if isNull {
			v.Set(reflect.Zero(t))
			return nil
		}
	}
	one := func(typ, msg string) []kv.FieldError {
		return []kv.FieldError{{Loc: loc, Msg: msg, Type: typ}}
	}
	switch {
	case t.Kind() == reflect.Pointer:
		ptr := reflect.New(t.Elem())
		if errs := decodeJSONValue(ptr.Elem(), t.Elem(), raw, loc); errs != nil {
			return errs
		}
		v.Set(ptr)
	case t == IDType:
		var s string
		if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			return one("string_type", "Input should be a valid string.")
		}
		id, ok := kv.ParseID(s)
		if !ok {
			return one("uuid_parsing", "Input should be a valid UUID.")
		}
		v.Set(reflect.ValueOf(id))
	case t.Kind() == reflect.String:
		var s string
		if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			return one("string_type", "Input should be a valid string.")
		}
		if !utf8.Valid(raw) || LoneSurrogate(raw) { // the decoder has replaced the bad text: look at the raw bytes
			return one("string_unicode", "Input should be valid UTF-8.")
		}
		if fe := CheckText(s, loc); fe != nil {
			return []kv.FieldError{*fe}
		}
		v.SetString(s)
	case t.Kind() == reflect.Int:
		var n int64
		if len(raw) == 0 || !(raw[0] == '-' || ('0' <= raw[0] && raw[0] <= '9')) || bytes.ContainsAny(raw, ".eE") || json.Unmarshal(raw, &n) != nil {
			return one("int_type", "Input should be a valid integer.")
		}
		v.SetInt(n)
	case t.Kind() == reflect.Bool:
		var b bool
		if json.Unmarshal(raw, &b) != nil || isNull {
			return one("bool_type", "Input should be a valid boolean.")
		}
		v.SetBool(b)
	case t.Kind() == reflect.Slice:
		var items []json.RawMessage
		if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
			return one("list_type", "Input should be a valid list.")
		}
		s := reflect.MakeSlice(t, len(items), len(items))
		var errs []kv.FieldError
		for i, item := range items {
			errs = append(errs, decodeJSONValue(s.Index(i), t.Elem(), item, append(append([]any(nil), loc...), i))...)
		}
		if errs != nil {
			return errs
		}
		v.Set(s)
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		var obj map[string]json.RawMessage
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
			return one("dict_type", "Input should be a valid dictionary.")
		}
		m := reflect.MakeMapWithSize(t, len(obj))
		var errs []kv.FieldError
		for _, k := range SortedKeys(obj) {
			if fe := CheckText(k, append(append([]any(nil), loc...), k)); fe != nil {
				errs = append(errs, *fe)
				continue
			}
			ev := reflect.New(t.Elem()).Elem()
			if e := decodeJSONValue(ev, t.Elem(), obj[k], append(append([]any(nil), loc...), k)); e != nil {
				errs = append(errs, e...)
				continue
			}
			m.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), ev)
		}
		if errs == nil && (!utf8.Valid(raw) || LoneSurrogate(raw)) { // every value is sound: a key is not
			errs = one("string_unicode", "Keys should be valid UTF-8.")
		}
		if errs != nil {
			return errs
		}
		v.Set(m)
	default:
		panic("unsupported JSON field type " + t.String())
	}
	return nil
}

func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// check applies the declarative constraints (enum, min, max, maxLength) to a set value.
func (fp *fieldPlan) check(v reflect.Value) *kv.FieldError {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		if fp.enum != nil && !(s == "" && !fp.Required) && !contains(fp.enum, s) {
			return &kv.FieldError{Loc: fp.loc(), Msg: "Input should be " + quoteList(fp.enum) + ".", Type: "enum",
				Ctx: map[string]any{"expected": quoteList(fp.enum)}}
		}
		if fp.minLen > 0 && utf8.RuneCountInString(s) < fp.minLen {
			return &kv.FieldError{Loc: fp.loc(), Msg: fmt.Sprintf("String should have at least %d %s.", fp.minLen, Plural(fp.minLen, "character")), Type: "string_too_short",
				Ctx: map[string]any{"min_length": fp.minLen}}
		}
		if fp.maxLen > 0 && utf8.RuneCountInString(s) > fp.maxLen {
			return &kv.FieldError{Loc: fp.loc(), Msg: fmt.Sprintf("String should have at most %d characters.", fp.maxLen), Type: "string_too_long",
				Ctx: map[string]any{"max_length": fp.maxLen}}
		}
	case reflect.Int:
		n := int(v.Int())
		if fp.min != nil && n < *fp.min {
			return &kv.FieldError{Loc: fp.loc(), Msg: fmt.Sprintf("Input should be greater than or equal to %d.", *fp.min), Type: "greater_than_equal",
				Ctx: map[string]any{"ge": *fp.min}}
		}
		if fp.max != nil && n > *fp.max {
			return &kv.FieldError{Loc: fp.loc(), Msg: fmt.Sprintf("Input should be less than or equal to %d.", *fp.max), Type: "less_than_equal",
				Ctx: map[string]any{"le": *fp.max}}
		}
	}
	return nil
}

func Plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = "'" + s + "'"
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

func Missing(loc []any) kv.FieldError {
	return kv.FieldError{Loc: loc, Msg: "Field required.", Type: "missing"}
}

// CheckText is the rule every text input follows, on every surface (REST body, path and
// query, MCP arguments, the participant API): valid UTF-8 and no NUL character. Invalid
// bytes are refused rather than replaced, so what is stored is what was sent; NUL is
// refused because it is never text and truncates in many tools downstream (C strings,
// some CSV readers, terminals). A JSON body is checked whole for UTF-8 before decoding
// (see bodyUTF8) and each string in its raw form, since decoding replaces bad bytes.
func CheckText(s string, loc []any) *kv.FieldError {
	switch {
	case !utf8.ValidString(s):
		return &kv.FieldError{Loc: loc, Msg: "Input should be valid UTF-8.", Type: "string_unicode"}
	case strings.IndexByte(s, 0) >= 0:
		return &kv.FieldError{Loc: loc, Msg: "Input must not contain NUL characters.", Type: "null_character"}
	}
	return nil
}

// CheckLabel is checkText for text a stranger chose and a person is shown as a name to
// decide by (an OAuth client's name on the consent page, and the addresses beside it):
// one line, and none of the explicit bidirectional formatting characters (embeddings,
// overrides, isolates: U+202A–U+202E, U+2066–U+2069), with which a name can show its
// letters in another order than they are sent ("Tool", U+202E, "moc.elgoog" reads as
// "Toolgoogle.com"). Right-to-left scripts, directional marks (U+200E, U+200F,
// U+061C) and joiners are text and pass: they cannot reorder letters.
func CheckLabel(s string, loc []any) *kv.FieldError {
	if fe := CheckText(s, loc); fe != nil {
		return fe
	}
	for _, r := range s {
		switch {
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			return &kv.FieldError{Loc: loc, Msg: "Input must not contain control characters or line breaks.", Type: "control_character"}
		case '\u202a' <= r && r <= '\u202e' || '\u2066' <= r && r <= '\u2069':
			return &kv.FieldError{Loc: loc, Msg: fmt.Sprintf("Input must not contain bidirectional formatting characters (here U+%04X), which can make it read as something else.", r),
				Type: "bidi_character"}
		}
	}
	return nil
}

// CheckRawLabel is checkLabel for a JSON value as sent: a string is checked in its raw
// form for invalid UTF-8 and lone surrogate escapes, which decoding would replace with
// U+FFFD, then decoded and checked. Anything but a string passes (its type is another
// check's).
func CheckRawLabel(raw []byte, loc []any) *kv.FieldError {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return nil
	}
	if !utf8.Valid(raw) || LoneSurrogate(raw) {
		return &kv.FieldError{Loc: loc, Msg: "Input should be valid UTF-8.", Type: "string_unicode"}
	}
	return CheckLabel(s, loc)
}

// LoneSurrogate reports whether valid JSON text raw holds a \u escape of a UTF-16
// surrogate (U+D800–U+DFFF) that is not a high one followed by a low one. Such text is
// plain ASCII on the wire, but encoding/json decodes it to U+FFFD: it is invalid text
// like invalid UTF-8, and refused the same way rather than stored replaced.
func LoneSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if i+1 < len(raw) && raw[i+1] != 'u' {
			i++ // a two-character escape, such as \\ (the next backslash is not an escape)
			continue
		}
		r, ok := escapedUnit(raw, i)
		switch {
		case !ok || r < 0xD800 || r > 0xDFFF:
		case r >= 0xDC00:
			return true // a low surrogate with no high one before it
		default:
			if lo, ok := escapedUnit(raw, i+6); !ok || lo < 0xDC00 || lo > 0xDFFF {
				return true // a high surrogate with no low one after it
			}
			i += 6 // the low half of the pair
		}
		i += 5
	}
	return false
}

// escapedUnit returns the code unit of the \uXXXX escape at raw[i:], if there is one.
func escapedUnit(raw []byte, i int) (rune, bool) {
	if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range raw[i+2 : i+6] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// validator is implemented by inputs with rules beyond the declarative tags.
type validator interface {
	Validate() []kv.FieldError
}

// Finish runs the declarative checks and the input's own validate, and returns every
// failure as one EINVALID error.
func (p *InputPlan) Finish(in any, errs []kv.FieldError) error {
	v := reflect.ValueOf(in).Elem()
	for i := range p.Fields {
		fp := &p.Fields[i]
		if fe := fp.check(v.Field(fp.index)); fe != nil {
			errs = append(errs, *fe)
		}
	}
	if len(errs) > 0 {
		return WireInvalid(errs...)
	}
	// An input's own rules speak the domain, like kv: each surface locates them.
	if val, ok := in.(validator); ok {
		if errs = val.Validate(); len(errs) > 0 {
			return kv.Invalid(errs...)
		}
	}
	return nil
}

// BindArgs fills in (a *In) from one JSON object holding every field by name: the MCP
// and A2A form. Unknown names are refused like unknown body fields.
func (p *InputPlan) BindArgs(in any, args json.RawMessage) error {
	obj, errs := decodeObject(args, true)
	if errs != nil {
		return WireInvalid(errs...)
	}
	v := reflect.ValueOf(in).Elem()
	known := make(map[string]bool, len(p.Fields))
	for i := range p.Fields {
		fp := &p.Fields[i]
		known[fp.Name] = true
		raw, ok := obj[fp.Name]
		if !ok {
			if fp.Required {
				errs = append(errs, Missing(fp.loc()))
			}
			continue
		}
		if fp.Src != SrcBody && fp.Typ.Kind() != reflect.Pointer && bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			errs = append(errs, Missing(fp.loc()))
			continue
		}
		errs = append(errs, fp.setJSON(v.Field(fp.index), raw)...)
	}
	errs = append(errs, extraFields(obj, known, "body")...)
	return p.Finish(in, append(errs, bodyUTF8(args, errs)...))
}

// bodyUTF8 refuses a body with invalid UTF-8 that no field check caught (a member name
// of the body itself): decoding replaced those bytes, and nothing replaced is accepted.
func bodyUTF8(raw []byte, errs []kv.FieldError) []kv.FieldError {
	if len(errs) > 0 || (utf8.Valid(raw) && !LoneSurrogate(raw)) {
		return nil
	}
	return []kv.FieldError{{Loc: []any{"body"}, Msg: "Body is not valid UTF-8.", Type: "string_unicode"}}
}

// decodeObject parses a JSON object into raw members. Empty input is an empty object
// when emptyOK, else a missing body.
func decodeObject(raw []byte, emptyOK bool) (map[string]json.RawMessage, []kv.FieldError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		if emptyOK {
			return map[string]json.RawMessage{}, nil
		}
		return nil, []kv.FieldError{Missing([]any{"body"})}
	}
	if raw[0] != '{' {
		if !json.Valid(raw) {
			return nil, []kv.FieldError{{Loc: []any{"body"}, Msg: "Body is not valid JSON.", Type: "json_invalid"}}
		}
		return nil, []kv.FieldError{{Loc: []any{"body"}, Msg: "Input should be a JSON object.", Type: "model_attributes_type"}}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, []kv.FieldError{{Loc: []any{"body"}, Msg: "Body is not valid JSON.", Type: "json_invalid"}}
	}
	if obj == nil {
		obj = map[string]json.RawMessage{}
	}
	return obj, nil
}

func extraFields(obj map[string]json.RawMessage, known map[string]bool, src string) []kv.FieldError {
	var errs []kv.FieldError
	for _, k := range SortedKeys(obj) {
		if !known[k] {
			errs = append(errs, kv.FieldError{Loc: []any{src, k}, Msg: "Extra inputs are not permitted.", Type: "extra_forbidden"})
		}
	}
	return errs
}

// sourceOf returns where the input field named name comes from on REST; names the
// plan does not hold are the body's.
func (p *InputPlan) sourceOf(name string) fieldSource {
	for i := range p.Fields {
		if p.Fields[i].Name == name {
			return p.Fields[i].Src
		}
	}
	return SrcBody
}
