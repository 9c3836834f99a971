package app

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/webui"
)

// appOp returns the operation named name from the research table. The research pages
// run operations through it, so a page can never apply a rule the API does not.
func (s *App) Op(name string) *pipeline.Operation {
	for _, o := range s.Ops {
		if o.Name == name {
			return o
		}
	}
	panic("server: no operation " + name) // a typo in this package, caught by any page test
}

// appWire is the research pipeline as the web app's actions: the input is built from
// a form and checked as binding checks any other; no idempotency key; and no API
// budget (budgetNone: people are limited where they sign in).
var appWire = pipeline.ResearchWire{Budget: pipeline.BudgetNone, Bind: pipeline.BindBuiltInput}

// appAction is the outcome of one app action, for the page that ran it (the request's
// data).
type appAction struct {
	out any
	err error
}

// renderAppAction hands an action's outcome back to its page, which renders it with
// everything else it shows.
func renderAppAction(r *pipeline.Request, err error) {
	a := r.Data.(*appAction)
	a.out, a.err = r.Out, err
}

// appCalls pools the requests of app actions: a page may run several.
var appCalls = sync.Pool{New: func() any { return new(appCallState) }}

type appCallState struct {
	r   pipeline.Request
	res appAction
}

// appCall runs a research operation for the app through the research pipeline, as
// the API runs it: the scope check, the input's declarative rules and its own
// validation, the scope the input needs, then the operation. Only binding differs
// (forms instead of JSON).
func Call[Out any](ctx context.Context, s *App, p *pipeline.Principal, name string, in any) (Out, error) {
	var zero Out
	st := appCalls.Get().(*appCallState)
	defer func() {
		*st = appCallState{}
		appCalls.Put(st)
	}()
	st.r = pipeline.Request{Ctx: ctx, Op: s.Op(name), P: p, In: in, Data: &st.res}
	s.actions.Run(&st.r)
	if st.res.err != nil {
		return zero, st.res.err
	}
	return st.res.out.(Out), nil
}

// appMay applies the research pipeline's scope rules of operation name (its scope
// step, and with in its required-scope step) without running it: for a page that leads
// to the operation, or shows what it would, so the page asks what the API would.
func (s *App) appMay(p *pipeline.Principal, name string, in any) error {
	o := s.Op(name)
	if err := p.RoleAllows(o); err != nil {
		return err
	}
	if err := o.CheckScope(p); err != nil {
		return err
	}
	if in == nil {
		return nil
	}
	return p.Require(o.RequiredScope(in))
}

// formErrors turns a validation refusal into messages by form field, or returns nil
// when err is not one (the caller passes it on to the error page). A field is named by
// the first name in the error's location after any wire part ("body", "query", "path"),
// so ["body","context","k"] and ["context","k"] both land on "context".
func formErrors(err error) webui.FieldErrors {
	if err == nil {
		return nil
	}
	ae := pipeline.ToAPIError(err)
	if ae.Status != 422 {
		return nil
	}
	out := webui.FieldErrors{}
	for _, f := range ae.Fields {
		name := ""
		for _, part := range f.Loc {
			s, ok := part.(string)
			if !ok {
				continue
			}
			if s == "body" || s == "query" || s == "path" || s == "header" {
				continue
			}
			name = s
			break
		}
		if _, seen := out[name]; !seen {
			out[name] = f.Msg
		}
	}
	if len(ae.Fields) == 0 {
		out[""] = ae.Detail
	}
	return out
}

// StampOf formats t for a page: RFC 3339 for machines, "2 Jan 2006, 15:04 UTC" for
// people. Written out by hand: lists format two stamps a row, and time.Format's
// layout interpretation was a tenth of a studies page.
func StampOf(t time.Time) webui.Stamp {
	t = t.UTC()
	y, mo, d := t.Date()
	h, mi, sec := t.Clock()
	var iso [20]byte
	b := iso[:0]
	b = append4(b, y)
	b = append(b, '-')
	b = append2(b, int(mo))
	b = append(b, '-')
	b = append2(b, d)
	b = append(b, 'T')
	b = append2(b, h)
	b = append(b, ':')
	b = append2(b, mi)
	b = append(b, ':')
	b = append2(b, sec)
	b = append(b, 'Z')
	var text [24]byte
	x := strconv.AppendInt(text[:0], int64(d), 10)
	x = append(x, ' ')
	x = append(x, mo.String()[:3]...)
	x = append(x, ' ')
	x = append4(x, y)
	x = append(x, ", "...)
	x = append2(x, h)
	x = append(x, ':')
	x = append2(x, mi)
	x = append(x, " UTC"...)
	return webui.Stamp{ISO: string(b), Text: string(x)}
}

func append2(b []byte, n int) []byte { return append(b, byte('0'+n/10%10), byte('0'+n%10)) }

func append4(b []byte, n int) []byte {
	return append(b, byte('0'+n/1000%10), byte('0'+n/100%10), byte('0'+n/10%10), byte('0'+n%10))
}

func stampPtr(t *time.Time) *webui.Stamp {
	if t == nil {
		return nil
	}
	st := StampOf(*t)
	return &st
}

// wireStamp formats a wire time the operations return.
func wireStamp(t pipeline.Time) webui.Stamp {
	at, err := t.Parse()
	if err != nil {
		return webui.Stamp{ISO: string(t), Text: string(t)}
	}
	return StampOf(at)
}

func wireStampPtr(t *pipeline.Time) *webui.Stamp {
	if t == nil {
		return nil
	}
	st := wireStamp(*t)
	return &st
}

// spoken renders seconds as a person reads a duration: "45 s", "4 min 10 s", "1 h 2 min".
func spoken(seconds int) string {
	switch {
	case seconds < 60:
		return strconv.Itoa(seconds) + " s"
	case seconds < 3600:
		if r := seconds % 60; r != 0 {
			return fmt.Sprintf("%d min %d s", seconds/60, r)
		}
		return strconv.Itoa(seconds/60) + " min"
	default:
		return fmt.Sprintf("%d h %d min", seconds/3600, seconds%3600/60)
	}
}

// clock renders an offset into an interview as m:ss (or h:mm:ss).
func clock(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int(d / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s%3600/60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// byteSize renders a file size.
func byteSize(n int64) string {
	switch {
	case n < 1024:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1<<20:
		return strconv.FormatInt((n+512)/1024, 10) + " KB"
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
}

// parseIDs keeps the well-formed ids of raw, in order, without repeats.
func parseIDs(raw []string) []kv.ID {
	var out []kv.ID
	seen := map[kv.ID]bool{}
	for _, r := range raw {
		if id, ok := kv.ParseID(r); ok && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
