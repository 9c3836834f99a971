package research

import (
	"bytes"
	"sync"

	json "github.com/goccy/go-json"

	"interviewd/kv"
)

// studyRendersMax bounds the rendered studies kept: enough for the studies a busy
// instance is asked about, a few megabytes at most.
const studyRendersMax = 1024

// studyRenders keeps, per study, the stored record last read and the response rendered
// from it. Reading a study twice costs a decode of its record (with a brief, the
// largest part of a study read) and an encode of the answer each time; when the stored
// bytes are still the very bytes the response was rendered from, the response is still
// right and is served as it is. Nothing needs invalidating: a change to the study
// changes its record, and an unchanged record can only render the same answer. The
// record is read in the caller's partition first, so an entry answers only callers
// who could read the study anyway.
type studyRenders struct {
	Mu sync.RWMutex
	M  map[kv.ID]*studyRender
}

// studyRender is immutable once stored.
type studyRender struct {
	Record []byte // the stored study, copied
	detail StudyDetail
}

func NewStudyRenders() *studyRenders { return &studyRenders{M: make(map[kv.ID]*studyRender)} }

// Detail returns the study's detail with its JSON, rendering it from raw (the record
// as stored now) unless the rendering kept for id was made from the same bytes. raw is
// only read during the call.
func (r *studyRenders) Detail(id kv.ID, raw []byte) (StudyDetail, error) {
	r.Mu.RLock()
	e := r.M[id]
	r.Mu.RUnlock()
	if e != nil && bytes.Equal(e.Record, raw) {
		return e.detail, nil
	}
	d, err := renderStudy(raw)
	if err != nil {
		return StudyDetail{}, err
	}
	e = &studyRender{Record: bytes.Clone(raw), detail: d}
	r.Mu.Lock()
	if _, ok := r.M[id]; !ok && len(r.M) >= studyRendersMax {
		for k := range r.M { // any one: a map's order is random enough for a bound
			delete(r.M, k)
			break
		}
	}
	r.M[id] = e
	r.Mu.Unlock()
	return d, nil
}

// renderStudy is the decode-and-encode path: the stored record decoded, the detail
// built and encoded field by field.
func renderStudy(raw []byte) (StudyDetail, error) {
	st, err := kv.DecodeStudy(raw)
	if err != nil {
		return StudyDetail{}, err
	}
	d := NewStudyDetail(st)
	if d.encoded, err = json.MarshalNoEscape(PlainStudyDetail(d)); err != nil {
		return StudyDetail{}, err
	}
	return d, nil
}
