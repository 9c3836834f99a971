package server

import (
	"reflect"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
)

// bindREST fills a fresh input from the request's path parameters, query string and
// JSON body, and validates it. Values are copied: nothing keeps a byte slice of c.
func (o *Operation) bindREST(c *fasthttp.RequestCtx) (any, error) {
	in := o.newInput()
	v := reflect.ValueOf(in).Elem()
	p := o.plan
	var errs []kv.FieldError
	args := c.QueryArgs()
	for i := range p.fields {
		fp := &p.fields[i]
		var raw string
		var ok bool
		switch fp.src {
		case srcPath:
			raw, ok = c.UserValue(fp.name).(string)
		case srcQuery:
			var b []byte
			if b = args.Peek(fp.name); b != nil {
				raw, ok = string(b), true
			}
		default:
			continue
		}
		if !ok {
			if fp.required {
				errs = append(errs, missing(fp.loc()))
			}
			continue
		}
		if fe := fp.setString(v.Field(fp.index), raw); fe != nil {
			errs = append(errs, *fe)
		}
	}
	if p.hasBody {
		body, err := readBody(c, maxJSONBody)
		if err != nil {
			return nil, err
		}
		errs = append(errs, p.bindBody(v, body)...)
	}
	if err := p.finish(in, errs); err != nil {
		return nil, err
	}
	return in, nil
}

// bindBody decodes a JSON object body strictly: unknown members are refused, required
// members must be present.
func (p *inputPlan) bindBody(v reflect.Value, body []byte) []kv.FieldError {
	obj, errs := decodeObject(body, false)
	if errs != nil {
		return errs
	}
	known := make(map[string]bool, len(p.fields))
	for i := range p.fields {
		fp := &p.fields[i]
		if fp.src != srcBody {
			continue
		}
		known[fp.name] = true
		raw, ok := obj[fp.name]
		if !ok {
			if fp.required {
				errs = append(errs, missing(fp.loc()))
			}
			continue
		}
		errs = append(errs, fp.setJSON(v.Field(fp.index), raw)...)
	}
	errs = append(errs, extraFields(obj, known, "body")...)
	return append(errs, bodyUTF8(body, errs)...)
}
