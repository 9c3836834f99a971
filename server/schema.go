package server

import (
	"reflect"
	"strings"
	"time"
)

// Schema generation: JSON Schema (2020-12, as OpenAPI 3.1 uses it) from the same Go
// types the operations decode and encode, so documents and tool schemas cannot drift.

type schema = map[string]any

var (
	timeType     = reflect.TypeFor[time.Time]()
	wireTimeType = reflect.TypeFor[Time]()
)

// typeSchema returns the schema of an output (or nested) type. Output objects list
// every member without omitempty as required.
func typeSchema(t reflect.Type) schema {
	switch {
	case t == idType:
		return schema{"type": "string", "format": "uuid"}
	case t == timeType || t == wireTimeType:
		return schema{"type": "string", "format": "date-time"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(typeSchema(t.Elem()))
	case reflect.String:
		return schema{"type": "string"}
	case reflect.Int, reflect.Int64:
		return schema{"type": "integer"}
	case reflect.Bool:
		return schema{"type": "boolean"}
	case reflect.Slice:
		return schema{"type": "array", "items": typeSchema(t.Elem())}
	case reflect.Map:
		return schema{"type": "object", "additionalProperties": typeSchema(t.Elem())}
	case reflect.Struct:
		props := schema{}
		required := []string{}
		addStructFields(t, props, &required)
		return schema{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	}
	panic("no schema for " + t.String())
}

func addStructFields(t reflect.Type, props schema, required *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			addStructFields(f.Type, props, required)
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
		props[name] = fieldSchema(f.Type, f.Tag.Get("enum"), f.Tag.Get("doc"))
		if !strings.Contains(opts, "omitempty") {
			*required = append(*required, name)
		}
	}
}

func fieldSchema(t reflect.Type, enum, doc string) schema {
	sc := typeSchema(t)
	if enum != "" {
		vals := []any{}
		for _, e := range strings.Split(enum, ",") {
			vals = append(vals, e)
		}
		if t.Kind() == reflect.Pointer {
			vals = append(vals, nil)
		}
		sc["enum"] = vals
	}
	if doc != "" {
		sc["description"] = doc
	}
	return sc
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

// inputFieldSchema is one input field's schema with its declarative constraints.
func inputFieldSchema(fp *fieldPlan) schema {
	sc := fieldSchema(fp.typ, strings.Join(fp.enum, ","), fp.doc)
	if fp.min != nil {
		sc["minimum"] = *fp.min
	}
	if fp.max != nil {
		sc["maximum"] = *fp.max
	}
	if fp.maxLen > 0 {
		sc["maxLength"] = fp.maxLen
	}
	return sc
}

// inputSchema is the object schema of an input's fields from the given sources (all
// of them for MCP arguments; the body fields for a REST request body).
func (p *inputPlan) inputSchema(sources ...fieldSource) schema {
	props := schema{}
	required := []string{}
	for i := range p.fields {
		fp := &p.fields[i]
		if !containsSource(sources, fp.src) {
			continue
		}
		props[fp.name] = inputFieldSchema(fp)
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

// restResponseSchema is the schema of the REST success body: the items array for lists.
func (o *Operation) restResponseSchema() schema {
	if o.out.Implements(listResultType) {
		f, _ := o.out.FieldByName("Items")
		return typeSchema(f.Type)
	}
	return typeSchema(o.out)
}

var listResultType = reflect.TypeFor[listResult]()
