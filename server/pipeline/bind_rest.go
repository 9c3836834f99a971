package pipeline

import (
	"reflect"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
)

// bindREST fills a fresh input from the request's path parameters, query string and
// JSON body, and validates it. Values are copied: nothing keeps a byte slice of c.
func (o *Operation) bindREST(c *fasthttp.RequestCtx) (any, error) {
	in := o.NewInput()
	v := reflect.ValueOf(in).Elem()
	p := o.Plan
	var errs []kv.FieldError
	args := c.QueryArgs()
	for i := range p.Fields {
		fp := &p.Fields[i]
		var raw string
		var ok bool
		switch fp.Src {
		case SrcPath:
			raw, ok = c.UserValue(fp.Name).(string)
		case SrcQuery:
			var b []byte
			if b = args.Peek(fp.Name); b != nil {
				raw, ok = string(b), true
			}
		default:
			continue
		}
		if !ok {
			if fp.Required {
				errs = append(errs, Missing(fp.loc()))
			}
			continue
		}
		if fe := fp.setString(v.Field(fp.index), raw); fe != nil {
			errs = append(errs, *fe)
		}
	}
	if p.HasBody {
		body, err := ReadBody(c, MaxJSONBody)
		if err != nil {
			return nil, err
		}
		errs = append(errs, p.BindBody(v, body)...)
	}
	if err := p.Finish(in, errs); err != nil {
		return nil, err
	}
	return in, nil
}

// BindBody decodes a JSON object body strictly: unknown members are refused, required
// members must be present.
func (p *InputPlan) BindBody(v reflect.Value, body []byte) []kv.FieldError {
	obj, errs := decodeObject(body, false)
	if errs != nil {
		return errs
	}
	known := make(map[string]bool, len(p.Fields))
	for i := range p.Fields {
		fp := &p.Fields[i]
		if fp.Src != SrcBody {
			continue
		}
		known[fp.Name] = true
		raw, ok := obj[fp.Name]
		if !ok {
			if fp.Required {
				errs = append(errs, Missing(fp.loc()))
			}
			continue
		}
		errs = append(errs, fp.setJSON(v.Field(fp.index), raw)...)
	}
	errs = append(errs, extraFields(obj, known, "body")...)
	return append(errs, bodyUTF8(body, errs)...)
}
