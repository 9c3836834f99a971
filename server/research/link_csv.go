package research

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	netmail "net/mail"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"interviewd/kv"
	"interviewd/mail"
	"interviewd/server/pipeline"
)

// A batch of person links from a CSV: a header row, then one row per person. The
// label column is required; note and email are the link's note and the address its
// invitation goes to (used for that only, never stored); every other column is a
// context key. The same parser serves the API (the csv field) and the app (an
// uploaded file), so a file refused in one is refused in the other, with the same
// words: each problem names its row (as a spreadsheet numbers it, the header being
// row 1) and its column.

// Limits of one CSV: a batch is one transaction, and these bound its size.
const (
	// LinksCSVMaxBytes stays under the API's 1 MiB body limit, so the CSV's own limit,
	// with its own words, is what a large file meets on every surface.
	LinksCSVMaxBytes = 512 << 10
	linksCSVMaxRows  = kv.LinksBatchMax
	// linksCSVMaxProblems bounds the problems reported at once: enough to fix a file
	// in a few rounds, not a page of a thousand lines.
	linksCSVMaxProblems = 20
)

// Columns with a meaning of their own (compared case-insensitively).
const (
	csvLabel = "label"
	csvNote  = "note"
	csvEmail = "email"
)

// linkRow is one person's link request and the address to mail it to.
type linkRow struct {
	req   kv.LinkRequest
	email string
}

// csvProblem locates a problem at ["csv", row, column]; column is "" for the row.
func csvProblem(row int, column, typ, msg string) kv.FieldError {
	loc := []any{"csv", row}
	where := "Row " + strconv.Itoa(row)
	if column != "" {
		loc = append(loc, column)
		where += ", column " + strconv.Quote(column)
	}
	return kv.FieldError{Loc: loc, Type: typ, Msg: where + ": " + msg}
}

// parseLinksCSV reads a batch. email says the links are to be mailed: an email column
// and an address on every row are then required. EINVALID lists the problems.
func parseLinksCSV(text string, email bool) ([]linkRow, error) {
	if len(text) > LinksCSVMaxBytes {
		return nil, kv.Invalid(kv.FieldError{Loc: []any{"csv"}, Type: "too_large",
			Msg: "The CSV is larger than 512 KB; split it into smaller files.", Ctx: map[string]any{"max_bytes": LinksCSVMaxBytes}})
	}
	if !utf8.ValidString(text) {
		return nil, kv.Invalid(kv.FieldError{Loc: []any{"csv"}, Type: "string_unicode", Msg: "The CSV is not UTF-8 text; save it as \"CSV UTF-8\"."})
	}
	text = strings.TrimPrefix(text, "\ufeff") // the byte order mark spreadsheets write
	r := csv.NewReader(strings.NewReader(text))
	r.Comma = sniffComma(text)
	r.FieldsPerRecord = -1 // a short or long row is reported as a problem of its own
	records, err := r.ReadAll()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, kv.Invalid(csvProblem(pe.StartLine, "", "csv_invalid", pe.Err.Error()+"."))
		}
		return nil, kv.Invalid(kv.FieldError{Loc: []any{"csv"}, Type: "csv_invalid", Msg: "The CSV could not be read."})
	}
	if len(records) == 0 {
		return nil, kv.Invalid(kv.FieldError{Loc: []any{"csv"}, Type: "missing", Msg: "The CSV is empty: it needs a header row with a label column, then one row per person."})
	}
	header := records[0]
	var problems []kv.FieldError
	cols := map[string]int{csvLabel: -1, csvNote: -1, csvEmail: -1}
	seen := map[string]bool{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		header[i] = h
		low := strings.ToLower(h)
		switch {
		case h == "":
			problems = append(problems, csvProblem(1, "", "missing", fmt.Sprintf("column %d has no name.", i+1)))
		case seen[low]:
			problems = append(problems, csvProblem(1, h, "duplicate", "this column appears twice."))
		case low == csvLabel || low == csvNote || low == csvEmail:
			cols[low] = i
		}
		seen[low] = true
	}
	if cols[csvLabel] < 0 {
		problems = append(problems, csvProblem(1, "", "missing", "the header has no label column."))
	}
	if email && cols[csvEmail] < 0 {
		problems = append(problems, csvProblem(1, "", "missing", "the header has no email column, so the links cannot be emailed."))
	}
	if problems != nil {
		return nil, kv.Invalid(problems...)
	}
	var out []linkRow
	for n, rec := range records[1:] {
		row := n + 2
		if blankRecord(rec) {
			continue
		}
		if len(out) == linksCSVMaxRows {
			return nil, kv.Invalid(csvProblem(row, "", "too_long", "a batch has at most 1,000 people; split the file."))
		}
		if len(rec) != len(header) {
			problems = append(problems, csvProblem(row, "", "row_length", fmt.Sprintf("it has %d cells where the header has %d.", len(rec), len(header))))
		} else {
			lr, ps := linkRowOf(header, cols, rec, row, email)
			problems = append(problems, ps...)
			out = append(out, lr)
		}
		if len(problems) >= linksCSVMaxProblems {
			break
		}
	}
	if problems != nil {
		return nil, kv.Invalid(problems...)
	}
	if len(out) == 0 {
		return nil, kv.Invalid(kv.FieldError{Loc: []any{"csv"}, Type: "missing", Msg: "The CSV has a header but no people: add one row per person."})
	}
	return out, nil
}

// linkRowOf reads one record (row is its spreadsheet number).
func linkRowOf(header []string, cols map[string]int, rec []string, row int, email bool) (linkRow, []kv.FieldError) {
	var (
		problems []kv.FieldError
		lr       linkRow
	)
	req := kv.LinkRequest{Audience: kv.AudiencePerson, Context: map[string]string{}}
	for i, cell := range rec {
		switch i {
		case cols[csvLabel]:
			req.Label = cell
		case cols[csvNote]:
			req.Note = cell
		case cols[csvEmail]:
			lr.email = strings.TrimSpace(cell)
		default:
			if cell = strings.TrimSpace(cell); cell != "" {
				req.Context[header[i]] = cell
			}
		}
	}
	if strings.TrimSpace(req.Label) == "" {
		problems = append(problems, csvProblem(row, header[cols[csvLabel]], "missing", "each person needs a label, so you can tell the links apart."))
	}
	if cols[csvEmail] >= 0 && (email || lr.email != "") {
		if a, err := netmail.ParseAddress(lr.email); err != nil || a.Address != lr.email {
			problems = append(problems, csvProblem(row, header[cols[csvEmail]], "email", "this is not an email address (name@example.com)."))
		}
	}
	valid, err := kv.ValidateLinkRequest(req)
	var ke *kv.Error
	if err != nil && pipeline.AsKV(err, &ke) {
		for _, f := range ke.Fields {
			column := ""
			switch {
			case len(f.Loc) >= 2 && f.Loc[0] == "context":
				column, _ = f.Loc[1].(string)
			case len(f.Loc) >= 1 && f.Loc[0] == "note":
				column = header[cols[csvNote]]
			case len(f.Loc) >= 1 && f.Loc[0] == "label":
				column = header[cols[csvLabel]]
			}
			problems = append(problems, csvProblem(row, column, f.Type, f.Msg))
		}
	} else if err != nil {
		return lr, append(problems, csvProblem(row, "", "value_error", err.Error()))
	}
	lr.req = valid
	return lr, problems
}

func blankRecord(rec []string) bool {
	for _, c := range rec {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// sniffComma returns ';' when the header row has semicolons and no commas (what a
// spreadsheet writes where the comma is the decimal mark), else ','.
func sniffComma(text string) rune {
	first, _, _ := strings.Cut(text, "\n")
	if !strings.Contains(first, ",") && strings.Contains(first, ";") {
		return ';'
	}
	return ','
}

// LinksCSV writes links back as CSV for a spreadsheet: label, url, status, the
// counts, then one column per context key (the union, sorted), then note. Cells a
// spreadsheet would run as a formula are prefixed with ' as in exports.
func LinksCSV(links []ParticipantLinkStatus) []byte {
	keySet := map[string]bool{}
	for _, l := range links {
		for k := range l.Context {
			keySet[k] = true
		}
	}
	keys := pipeline.SortedKeys(keySet)
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	head := append([]string{"label", "url", "audience", "status", "disabled", "opened", "started", "completed", "last_activity_at"}, keys...)
	_ = w.Write(append(head, "note"))
	for _, l := range links {
		last := ""
		if l.LastActivityAt != nil {
			last = string(*l.LastActivityAt)
		}
		rec := []string{csvCell(l.Label), l.URL, l.Audience, l.Status, strconv.FormatBool(l.Disabled),
			strconv.Itoa(l.Opened), strconv.Itoa(l.Started), strconv.Itoa(l.Completed), last}
		for _, k := range keys {
			rec = append(rec, csvCell(l.Context[k]))
		}
		_ = w.Write(append(rec, csvCell(l.Note)))
	}
	w.Flush()
	return buf.Bytes()
}

// csvCell guards a cell a spreadsheet would take for a formula (DECISIONS §10).
func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// linkInvitation is the mail that gives one person their link.
func linkInvitation(to, sender, study, url string) mail.Message {
	text := "Hello,\n\nYou are invited to take part in a research interview" + studySuffix(study) + ". " +
		"It happens in your browser, in writing, whenever suits you, and takes a few minutes.\n\n" +
		"Your personal link:\n" + url + "\n\n" +
		"The link is yours alone: please do not pass it on. If you would rather not take part, simply ignore this message.\n\n" + sender + "\n"
	return mail.Message{To: to, FromName: sender, Subject: "An invitation to a research interview" + studySuffix(study), Text: text}
}

func studySuffix(study string) string {
	if study == "" || study == "Untitled study" {
		return ""
	}
	return ": " + study
}

// sendMailBatch mails msgs one after another off the request path: one connection at
// a time, so a thousand invitations never open a thousand connections to the mail
// server. Failures are logged by address; the links exist whatever happens to a mail.
func (s *Service) sendMailBatch(msgs []mail.Message) {
	if s.Mail == nil || len(msgs) == 0 {
		return
	}
	sender := s.Mail
	go func() {
		failed := 0
		for _, m := range msgs {
			ctx, cancel := context.WithTimeout(s.Ctx, time.Minute)
			err := sender.Send(ctx, m)
			cancel()
			if err != nil {
				failed++
				s.Log.Error().Err(err).Msg("send link invitation")
			}
			if s.Ctx.Err() != nil {
				break
			}
		}
		s.Log.Info().Int("invitations", len(msgs)).Int("failed", failed).Msg("link invitations sent")
	}()
}
