package pipeline

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

type Schema = map[string]any

var (
	timeType     = reflect.TypeFor[time.Time]()
	wireTimeType = reflect.TypeFor[Time]()
)

// SchemaGen builds schemas. With components set (the OpenAPI document), a type given a
// component name is registered there once and referenced with $ref wherever it
// appears; without (MCP tool schemas, which must be self-contained) everything is
// inline. The zero value and a nil *schemaGen inline.
type SchemaGen struct {
	Components Schema // name → schema
}

const ComponentRefPrefix = "#/components/schemas/"

// Named returns sc under a component name: a $ref when g collects components (the
// first registration wins; a second, different shape under the same name is a
// programming error caught when the document is built), else sc itself.
func (g *SchemaGen) Named(name string, sc Schema) Schema {
	if g == nil || g.Components == nil || name == "" {
		return sc
	}
	if prev, ok := g.Components[name]; ok && !reflect.DeepEqual(prev, sc) {
		panic("openapi: component " + name + " is given two different shapes")
	}
	g.Components[name] = sc
	return Schema{"$ref": ComponentRefPrefix + name}
}

// typeSchema returns the schema of an output (or nested) type, always inline.
func typeSchema(t reflect.Type) Schema { return (*SchemaGen)(nil).TypeSchema(t) }

// TypeSchema returns the schema of an output (or nested) type. Output objects list
// every member without omitempty as required.
func (g *SchemaGen) TypeSchema(t reflect.Type) Schema {
	switch {
	case t == IDType:
		return Schema{"type": "string", "format": "uuid"}
	case t == timeType || t == wireTimeType:
		return Schema{"type": "string", "format": "date-time"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(g.TypeSchema(t.Elem()))
	case reflect.String:
		return Schema{"type": "string"}
	case reflect.Int, reflect.Int64:
		return Schema{"type": "integer"}
	case reflect.Float64:
		return Schema{"type": "number"}
	case reflect.Bool:
		return Schema{"type": "boolean"}
	case reflect.Slice:
		return Schema{"type": "array", "items": g.TypeSchema(t.Elem())}
	case reflect.Map:
		return Schema{"type": "object", "additionalProperties": g.TypeSchema(t.Elem())}
	case reflect.Struct:
		props := Schema{}
		required := []string{}
		g.addStructFields(t, props, &required)
		return Schema{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	}
	panic("no schema for " + t.String())
}

func (g *SchemaGen) addStructFields(t reflect.Type, props Schema, required *[]string) {
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
func (g *SchemaGen) fieldSchema(t reflect.Type, tag reflect.StructTag) Schema {
	var sc Schema
	if name := tag.Get("component"); name != "" {
		sc = g.componentSchema(t, name, tag)
	} else {
		sc = g.TypeSchema(t)
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
func (g *SchemaGen) componentSchema(t reflect.Type, name string, tag reflect.StructTag) Schema {
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(g.componentSchema(t.Elem(), name, tag))
	case reflect.Slice:
		return Schema{"type": "array", "items": g.componentSchema(t.Elem(), name, tag)}
	}
	sc := g.TypeSchema(t)
	enum := tag.Get("enum")
	if g != nil && g.Components != nil && enum == "" {
		enum = tag.Get("docEnum")
	}
	if vals := enumValues(enum, false); vals != nil {
		sc["enum"] = vals
	}
	if def, ok := tag.Lookup("default"); ok {
		sc["default"] = defaultValue(t, def)
	}
	return g.Named(name, sc)
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

func nullable(sc Schema) Schema {
	out := Schema{}
	for k, v := range sc {
		out[k] = v
	}
	switch typ := sc["type"].(type) {
	case string:
		out["type"] = []any{typ, "null"}
	default:
		return Schema{"anyOf": []any{sc, Schema{"type": "null"}}}
	}
	return out
}

// inputFieldSchema is one input field's schema with its declarative constraints and
// default.
func (g *SchemaGen) inputFieldSchema(fp *fieldPlan) Schema {
	sc := g.fieldSchema(fp.Typ, fp.tag)
	if k := fp.Typ.Kind(); (k == reflect.Slice || k == reflect.Map) && !fp.Required {
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
		sc["default"] = defaultValue(fp.Typ, def)
	}
	for tag, keyword := range docBounds {
		if n := intTag(fp.tag.Get(tag)); n != nil {
			sc[keyword] = *n
		}
	}
	if n := intTag(fp.tag.Get("docItemMaxLength")); n != nil {
		items, ok := sc["items"].(Schema)
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

// InputSchema is the object schema of an input's fields from the given sources (all
// of them for MCP arguments; the body fields for a REST request body).
func (p *InputPlan) InputSchema(sources ...fieldSource) Schema {
	return (*SchemaGen)(nil).InputSchema(p, sources...)
}

func (g *SchemaGen) InputSchema(p *InputPlan, sources ...fieldSource) Schema {
	props := Schema{}
	required := []string{}
	for i := range p.Fields {
		fp := &p.Fields[i]
		if !containsSource(sources, fp.Src) {
			continue
		}
		props[fp.Name] = g.inputFieldSchema(fp)
		if fp.Required {
			required = append(required, fp.Name)
		}
	}
	return Schema{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

func containsSource(list []fieldSource, s fieldSource) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// OutputSchema is the schema of an operation's result as a tool returns it.
func (o *Operation) OutputSchema() Schema { return typeSchema(o.out) }

// restResponseSchema is the schema of the REST success body: the items array for
// lists, whose items are then the named response component.
func (g *SchemaGen) restResponseSchema(o *Operation) Schema {
	if o.out.Implements(listResultType) {
		f, _ := o.out.FieldByName("Items")
		return Schema{"type": "array", "items": g.Named(o.Response, g.TypeSchema(f.Type.Elem()))}
	}
	return g.Named(o.Response, g.TypeSchema(o.out))
}

var listResultType = reflect.TypeFor[ListResult]()
