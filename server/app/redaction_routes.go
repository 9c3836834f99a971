package app

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/research"
	"interviewd/webui"
)

// Settings → Redaction and plugins. Every member may read what exports redact; only
// owners and admins change it or the plugins.
func (s *App) appRedactionRoutes() []appRoute {
	return []appRoute{
		{"GET", "/settings/redaction", AccessMember, s.handleAppRedaction},
		{"POST", "/settings/redaction", AccessAdmin, s.handleAppRedactionSave},
		{"POST", "/settings/plugins", AccessAdmin, s.handleAppPluginAdd},
		{"POST", "/settings/plugins/remove", AccessAdmin, s.handleAppPluginRemove},
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

func (s *App) handleAppRedaction(r *pipeline.Request) error {
	page, err := s.buildRedactionPage(r.Ctx, r.P, appOf(r).auth.Role.Manages())
	if err != nil {
		return err
	}
	page.Notice = redactionNotices[query(r, "done")]
	r.Out = redactionAppPage(0, page)
	return nil
}

func (s *App) handleAppRedactionSave(r *pipeline.Request) error {
	on := func(name string) bool { return formValue(r, name) == "on" }
	f := RedactionForm{Email: on("email"), Phone: on("phone"), Card: on("card"), IP: on("ip"),
		Names: formValues(r, "pattern_name"), Regexes: formValues(r, "pattern_regex")}
	page, err := s.appSetRedaction(r.Ctx, r.P, f)
	if err != nil {
		return err
	}
	status := 0
	if page.Notice == "" {
		status = 422
	}
	plugins, err := s.buildRedactionPage(r.Ctx, r.P, true)
	if err != nil {
		return err
	}
	page.Plugins = plugins.Plugins
	r.Out = redactionAppPage(status, page)
	return nil
}

// errPluginMissing is an upload without a file part.
var errPluginMissing = kv.Invalid(kv.FieldError{Loc: []any{"file"}, Type: "missing", Msg: "Choose a .wasm file to upload."})

// readPluginUpload reads the "file" part of a multipart body, at most MaxPluginBytes.
func readPluginUpload(r *pipeline.Request) ([]byte, error) {
	mediaType, params, err := mime.ParseMediaType(string(r.C.Request.Header.ContentType()))
	if err != nil || mediaType != "multipart/form-data" || params["boundary"] == "" {
		return nil, errPluginMissing
	}
	body := io.LimitReader(pipeline.BodyStream(r.C), research.MaxPluginBytes+research.MaxFormOverhead)
	mr := multipart.NewReader(body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, errPluginMissing
		}
		if err != nil {
			r.C.SetConnectionClose()
			return nil, kv.Invalid(kv.FieldError{Loc: []any{"file"}, Type: "multipart_invalid", Msg: "The upload could not be read; try again."})
		}
		if part.FormName() != "file" {
			continue
		}
		wasm, err := io.ReadAll(io.LimitReader(part, research.MaxPluginBytes+1))
		if err != nil {
			r.C.SetConnectionClose()
			return nil, kv.Invalid(kv.FieldError{Loc: []any{"file"}, Type: "multipart_invalid", Msg: "The upload could not be read; try again."})
		}
		if len(wasm) > research.MaxPluginBytes {
			r.C.SetConnectionClose()
			return nil, &pipeline.APIError{Status: 413, Code: "payload_too_large", Detail: "A plugin may be at most 32 MB."}
		}
		// Read the closing boundary, so the connection is left at the next request.
		if _, err := io.Copy(io.Discard, body); err != nil {
			r.C.SetConnectionClose()
		}
		if len(wasm) == 0 {
			return nil, errPluginMissing
		}
		return wasm, nil
	}
}

func (s *App) handleAppPluginAdd(r *pipeline.Request) error {
	wasm, err := readPluginUpload(r)
	if err == nil {
		_, err = research.AddOrgPlugin(r.Ctx, s.DB, s.Jobs.PluginHost(), r.P.Partition.Org, wasm)
	}
	if fe := formErrors(err); fe != nil {
		page, perr := s.buildRedactionPage(r.Ctx, r.P, true)
		if perr != nil {
			return perr
		}
		if _, ok := fe["file"]; !ok {
			fe = webui.FieldErrors{"file": fe.List()[0]}
		}
		page.Errors = fe
		r.Out = redactionAppPage(422, page)
		return nil
	}
	if err != nil {
		return err
	}
	r.Out = appRedirect{to: "/app/settings/redaction?done=plugin_added"}
	return nil
}

func (s *App) handleAppPluginRemove(r *pipeline.Request) error {
	if _, err := research.RemoveOrgPlugin(r.Ctx, s.DB, r.P.Partition.Org, formValue(r, "kind"), formValue(r, "name")); err != nil {
		return err
	}
	r.Out = appRedirect{to: "/app/settings/redaction?done=plugin_removed"}
	return nil
}
