package server

import (
	"maps"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Schema generation: JSON Schema (2020-12, as OpenAPI 3.1 uses it) from the same Go
// types the operations decode and encode, so documents and tool schemas cannot drift.
//
// Struct tags read here: enum:"a,b" (values the binder enforces), docEnum:"a" (values
// documents list while the runtime check accepts more, such as plugin export formats),
// doc:"...", default:"..." (inputs), component:"Name" (the field's type is a named
// schema in documents), and bounds the input's own validate enforces rather than the
// binder (so every refusal of a brief comes at once, in the domain's words):
// docMinimum, docMaximum, docMinLength, docMaxLength, docMinItems, docMaxItems, and
// docItemMaxLength (each string item of a list).

type schema = map[string]any

var (
	timeType     = reflect.TypeFor[time.Time]()
	wireTimeType = reflect.TypeFor[Time]()
)

// schemaGen builds schemas. With components set (the OpenAPI document), a type given a
// component name is registered there once and referenced with $ref wherever it
// appears; without (MCP tool schemas, which must be self-contained) everything is
// inline. The zero value and a nil *schemaGen inline.
type schemaGen struct {
	components schema // name → schema
}

const componentRefPrefix = "#/components/schemas/"

// named returns sc under a component name: a $ref when g collects components (the
// first registration wins; a second, different shape under the same name is a
// programming error caught when the document is built), else sc itself.
func (g *schemaGen) named(name string, sc schema) schema {
	if g == nil || g.components == nil || name == "" {
		return sc
	}
	if prev, ok := g.components[name]; ok && !reflect.DeepEqual(prev, sc) {
		panic("openapi: component " + name + " is given two different shapes")
	}
	g.components[name] = sc
	return schema{"$ref": componentRefPrefix + name}
}

// typeSchema returns the schema of an output (or nested) type, always inline.
func typeSchema(t reflect.Type) schema { return (*schemaGen)(nil).typeSchema(t) }

// typeSchema returns the schema of an output (or nested) type. Output objects list
// every member without omitempty as required.
func (g *schemaGen) typeSchema(t reflect.Type) schema {
	switch {
	case t == idType:
		return schema{"type": "string", "format": "uuid"}
	case t == timeType || t == wireTimeType:
		return schema{"type": "string", "format": "date-time"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(g.typeSchema(t.Elem()))
	case reflect.String:
		return schema{"type": "string"}
	case reflect.Int, reflect.Int64:
		return schema{"type": "integer"}
	case reflect.Float64:
		return schema{"type": "number"}
	case reflect.Bool:
		return schema{"type": "boolean"}
	case reflect.Slice:
		return schema{"type": "array", "items": g.typeSchema(t.Elem())}
	case reflect.Map:
		return schema{"type": "object", "additionalProperties": g.typeSchema(t.Elem())}
	case reflect.Struct:
		props := schema{}
		required := []string{}
		g.addStructFields(t, props, &required)
		return schema{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	}
	panic("no schema for " + t.String())
}

func (g *schemaGen) addStructFields(t reflect.Type, props schema, required *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			g.addStructFields(f.Type, props, required)
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = g.fieldSchema(f.Type, f.Tag)
		if !strings.Contains(opts, "omitempty") {
			*required = append(*required, name)
		}
	}
}

// fieldSchema is one struct field's schema from its type and tags.
func (g *schemaGen) fieldSchema(t reflect.Type, tag reflect.StructTag) schema {
	var sc schema
	if name := tag.Get("component"); name != "" {
		sc = g.componentSchema(t, name, tag)
	} else {
		sc = g.typeSchema(t)
		if vals := enumValues(tag.Get("enum"), t.Kind() == reflect.Pointer); vals != nil {
			sc["enum"] = vals
		}
	}
	if doc := tag.Get("doc"); doc != "" {
		sc["description"] = doc
	}
	return sc
}

// componentSchema is a field whose type is the named component: pointers and slices
// wrap the reference (null allowed, array of), and the enum values, documented ones
// included, belong to the component itself. Inline (MCP), only enforced values are
// listed, since a client validating its arguments would refuse the others.
func (g *schemaGen) componentSchema(t reflect.Type, name string, tag reflect.StructTag) schema {
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(g.componentSchema(t.Elem(), name, tag))
	case reflect.Slice:
		return schema{"type": "array", "items": g.componentSchema(t.Elem(), name, tag)}
	}
	sc := g.typeSchema(t)
	enum := tag.Get("enum")
	if g != nil && g.components != nil && enum == "" {
		enum = tag.Get("docEnum")
	}
	if vals := enumValues(enum, false); vals != nil {
		sc["enum"] = vals
	}
	if def, ok := tag.Lookup("default"); ok {
		sc["default"] = defaultValue(t, def)
	}
	return g.named(name, sc)
}

// enumValues lists an enum tag's values (and null for a pointer field); nil for none.
func enumValues(enum string, withNull bool) []any {
	if enum == "" {
		return nil
	}
	vals := []any{}
	for _, e := range strings.Split(enum, ",") {
		vals = append(vals, e)
	}
	if withNull {
		vals = append(vals, nil)
	}
	return vals
}

func nullable(sc schema) schema {
	out := schema{}
	for k, v := range sc {
		out[k] = v
	}
	switch typ := sc["type"].(type) {
	case string:
		out["type"] = []any{typ, "null"}
	default:
		return schema{"anyOf": []any{sc, schema{"type": "null"}}}
	}
	return out
}

// inputFieldSchema is one input field's schema with its declarative constraints and
// default.
func (g *schemaGen) inputFieldSchema(fp *fieldPlan) schema {
	sc := g.fieldSchema(fp.typ, fp.tag)
	if k := fp.typ.Kind(); (k == reflect.Slice || k == reflect.Map) && !fp.required {
		sc = nullable(sc) // the binder takes null for an absent list or object
	}
	if fp.min != nil {
		sc["minimum"] = *fp.min
	}
	if fp.max != nil {
		sc["maximum"] = *fp.max
	}
	if fp.minLen > 0 {
		sc["minLength"] = fp.minLen
	}
	if fp.maxLen > 0 {
		sc["maxLength"] = fp.maxLen
	}
	if def, ok := fp.tag.Lookup("default"); ok {
		sc["default"] = defaultValue(fp.typ, def)
	}
	for tag, keyword := range docBounds {
		if n := intTag(fp.tag.Get(tag)); n != nil {
			sc[keyword] = *n
		}
	}
	if n := intTag(fp.tag.Get("docItemMaxLength")); n != nil {
		items, ok := sc["items"].(schema)
		if !ok {
			panic("docItemMaxLength on a field that is not a list")
		}
		items = maps.Clone(items)
		items["maxLength"] = *n
		sc["items"] = items
	}
	return sc
}

// docBounds are the documents-only bound tags and the JSON Schema keyword of each.
var docBounds = map[string]string{"docMinimum": "minimum", "docMaximum": "maximum", "docMinLength": "minLength", "docMaxLength": "maxLength",
	"docMinItems": "minItems", "docMaxItems": "maxItems"}

// defaultValue is a default tag as a JSON value of the field's type.
func defaultValue(t reflect.Type, def string) any {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		n, err := strconv.Atoi(def)
		if err != nil {
			panic("bad default tag " + def + " on an integer field")
		}
		return n
	case reflect.Bool:
		return def == "true"
	}
	return def
}

// inputSchema is the object schema of an input's fields from the given sources (all
// of them for MCP arguments; the body fields for a REST request body).
func (p *inputPlan) inputSchema(sources ...fieldSource) schema {
	return (*schemaGen)(nil).inputSchema(p, sources...)
}

func (g *schemaGen) inputSchema(p *inputPlan, sources ...fieldSource) schema {
	props := schema{}
	required := []string{}
	for i := range p.fields {
		fp := &p.fields[i]
		if !containsSource(sources, fp.src) {
			continue
		}
		props[fp.name] = g.inputFieldSchema(fp)
		if fp.required {
			required = append(required, fp.name)
		}
	}
	return schema{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

func containsSource(list []fieldSource, s fieldSource) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// outputSchema is the schema of an operation's result as a tool returns it.
func (o *Operation) outputSchema() schema { return typeSchema(o.out) }

// restResponseSchema is the schema of the REST success body: the items array for
// lists, whose items are then the named response component.
func (g *schemaGen) restResponseSchema(o *Operation) schema {
	if o.out.Implements(listResultType) {
		f, _ := o.out.FieldByName("Items")
		return schema{"type": "array", "items": g.named(o.Response, g.typeSchema(f.Type.Elem()))}
	}
	return g.named(o.Response, g.typeSchema(o.out))
}

var listResultType = reflect.TypeFor[listResult]()
