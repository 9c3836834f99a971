package server

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"

	"interviewd/kv"
	"interviewd/webui"
)

// Settings → Redaction and plugins. Every member may read what exports redact; only
// owners and admins change it or the plugins.
func (s *Server) appRedactionRoutes() []appRoute {
	return []appRoute{
		{"GET", "/settings/redaction", accessMember, s.handleAppRedaction},
		{"POST", "/settings/redaction", accessAdmin, s.handleAppRedactionSave},
		{"POST", "/settings/plugins", accessAdmin, s.handleAppPluginAdd},
		{"POST", "/settings/plugins/remove", accessAdmin, s.handleAppPluginRemove},
	}
}

func redactionAppPage(status int, data webui.RedactionPage) *appPage {
	return &appPage{name: webui.PageRedaction, status: status, title: "Redaction and plugins", nav: webui.NavSettings, sub: "redaction", data: data}
}

// redactionNotices are the outcomes a redirect may name with ?done=.
var redactionNotices = map[string]string{
	"plugin_added":   "Plugin added. Exports started from now on use it.",
	"plugin_removed": "Plugin removed.",
}

func (s *Server) handleAppRedaction(r *request) error {
	page, err := s.buildRedactionPage(r.ctx, r.p, r.app().auth.Role.Manages())
	if err != nil {
		return err
	}
	page.Notice = redactionNotices[query(r, "done")]
	r.out = redactionAppPage(0, page)
	return nil
}

func (s *Server) handleAppRedactionSave(r *request) error {
	on := func(name string) bool { return r.formValue(name) == "on" }
	f := RedactionForm{Email: on("email"), Phone: on("phone"), Card: on("card"), IP: on("ip"),
		Names: r.formValues("pattern_name"), Regexes: r.formValues("pattern_regex")}
	page, err := s.appSetRedaction(r.ctx, r.p, f)
	if err != nil {
		return err
	}
	status := 0
	if page.Notice == "" {
		status = 422
	}
	plugins, err := s.buildRedactionPage(r.ctx, r.p, true)
	if err != nil {
		return err
	}
	page.Plugins = plugins.Plugins
	r.out = redactionAppPage(status, page)
	return nil
}

// errPluginMissing is an upload without a file part.
var errPluginMissing = kv.Invalid(kv.FieldError{Loc: []any{"file"}, Type: "missing", Msg: "Choose a .wasm file to upload."})

// readPluginUpload reads the "file" part of a multipart body, at most maxPluginBytes.
func readPluginUpload(r *request) ([]byte, error) {
	mediaType, params, err := mime.ParseMediaType(string(r.c.Request.Header.ContentType()))
	if err != nil || mediaType != "multipart/form-data" || params["boundary"] == "" {
		return nil, errPluginMissing
	}
	body := io.LimitReader(bodyStream(r.c), maxPluginBytes+maxFormOverhead)
	mr := multipart.NewReader(body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, errPluginMissing
		}
		if err != nil {
			r.c.SetConnectionClose()
			return nil, kv.Invalid(kv.FieldError{Loc: []any{"file"}, Type: "multipart_invalid", Msg: "The upload could not be read; try again."})
		}
		if part.FormName() != "file" {
			continue
		}
		wasm, err := io.ReadAll(io.LimitReader(part, maxPluginBytes+1))
		if err != nil {
			r.c.SetConnectionClose()
			return nil, kv.Invalid(kv.FieldError{Loc: []any{"file"}, Type: "multipart_invalid", Msg: "The upload could not be read; try again."})
		}
		if len(wasm) > maxPluginBytes {
			r.c.SetConnectionClose()
			return nil, &apiError{Status: 413, Code: "payload_too_large", Detail: "A plugin may be at most 32 MB."}
		}
		// Read the closing boundary, so the connection is left at the next request.
		if _, err := io.Copy(io.Discard, body); err != nil {
			r.c.SetConnectionClose()
		}
		if len(wasm) == 0 {
			return nil, errPluginMissing
		}
		return wasm, nil
	}
}

func (s *Server) handleAppPluginAdd(r *request) error {
	wasm, err := readPluginUpload(r)
	if err == nil {
		_, err = AddOrgPlugin(r.ctx, s.db, s.jobs.PluginHost(), r.p.Partition.Org, wasm)
	}
	if fe := formErrors(err); fe != nil {
		page, perr := s.buildRedactionPage(r.ctx, r.p, true)
		if perr != nil {
			return perr
		}
		if _, ok := fe["file"]; !ok {
			fe = webui.FieldErrors{"file": fe.List()[0]}
		}
		page.Errors = fe
		r.out = redactionAppPage(422, page)
		return nil
	}
	if err != nil {
		return err
	}
	r.out = appRedirect{to: "/app/settings/redaction?done=plugin_added"}
	return nil
}

func (s *Server) handleAppPluginRemove(r *request) error {
	if _, err := RemoveOrgPlugin(r.ctx, s.db, r.p.Partition.Org, r.formValue("kind"), r.formValue("name")); err != nil {
		return err
	}
	r.out = appRedirect{to: "/app/settings/redaction?done=plugin_removed"}
	return nil
}
