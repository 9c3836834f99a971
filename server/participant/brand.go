package participant

import (
	"bytes"
	"context"
	"strconv"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/pipeline"
	"interviewd/server/research"
	"interviewd/webui"
)

// Who is asking: the organisation's name, logo, colour and contact on its participant
// pages. The logo and the colour are served from the link's own path (same origin), so
// the pages' Content-Security-Policy stays as strict as it is: the logo is an <img>
// under img-src 'self', and the colour a stylesheet under style-src 'self', never an
// inline style.

// ParticipantOrganisation is who runs the research, in the participant API's answers.
type ParticipantOrganisation struct {
	Name         string  `json:"name"`
	LogoURL      *string `json:"logo_url"`     // a path on this server; null: no logo
	AccentColor  *string `json:"accent_color"` // "#rrggbb"; null: the default colours
	ContactEmail *string `json:"contact_email"`
}

func participantOrganisation(token string, org kv.Org) *ParticipantOrganisation {
	b := org.BrandOrZero()
	out := &ParticipantOrganisation{Name: org.ShownName(), AccentColor: research.NilIfEmpty(b.AccentColor), ContactEmail: research.NilIfEmpty(b.ContactEmail)}
	if u := logoPath(token, b); u != "" {
		out.LogoURL = &u
	}
	return out
}

// logoPath is the logo's URL for the link's pages, carrying its version so a browser
// may keep it; "" when the organisation has none.
func logoPath(token string, b kv.Brand) string {
	if b.Logo == nil {
		return ""
	}
	return "/i/" + token + "/logo?v=" + b.Logo.Version
}

// brandCSSPath is the stylesheet of the organisation's colour for the link's pages; ""
// when it has none.
func brandCSSPath(token string, b kv.Brand) string {
	if b.AccentColor == "" {
		return ""
	}
	return "/i/" + token + "/brand.css?v=" + b.AccentColor[1:]
}

// pageBrand is the brand part of a participant page.
func pageBrand(token string, org kv.Org) webui.PageBrand {
	b := org.BrandOrZero()
	return webui.PageBrand{Name: org.ShownName(), LogoURL: logoPath(token, b), StylesheetURL: brandCSSPath(token, b), ContactEmail: b.ContactEmail}
}

// linkOrg returns the organisation behind an invite link. ENOTFOUND for an unknown token.
func (s *Pages) linkOrg(ctx context.Context, token string) (kv.Org, error) {
	if !wellFormedToken(token) {
		return kv.Org{}, errLinkNotFound
	}
	l, err := s.DB.FindLinkByToken(ctx, token)
	if err != nil {
		return kv.Org{}, err
	}
	return s.DB.FindOrgByID(ctx, l.OrgID)
}

// brandCSS is the organisation's colour as custom properties over interview.css's, in
// the light scheme only: the colour was checked against the light backgrounds, and
// the dark scheme keeps its own, equally checked, colours.
func brandCSS(accent string) []byte {
	var b bytes.Buffer
	b.WriteString("/* The organisation's accent colour (light scheme). */\n@media not all and (prefers-color-scheme: dark) {\n  :root {\n")
	for _, prop := range []string{"--accent", "--accent-hover", "--bubble-out", "--focus"} {
		b.WriteString("    " + prop + ": " + accent + ";\n")
	}
	b.WriteString("  }\n}\n")
	return b.Bytes()
}

// handleParticipantBrandCSS serves the link's organisation colour as a stylesheet.
// Like the static files it is not counted against the page's per-address limit: it is
// two cached reads, and a versioned URL is fetched once per browser.
func (s *Pages) handleParticipantBrandCSS(c *fasthttp.RequestCtx) {
	token, _ := c.UserValue("token").(string)
	org, err := s.linkOrg(plainContext(c), token)
	accent := org.BrandOrZero().AccentColor
	if err != nil || accent == "" {
		s.participantAssetMissing(c, err)
		return
	}
	s.serveParticipantAsset(c, "text/css; charset=utf-8", accent[1:], brandCSS(accent))
}

// handleParticipantLogo serves the link's organisation logo.
func (s *Pages) handleParticipantLogo(c *fasthttp.RequestCtx) {
	token, _ := c.UserValue("token").(string)
	ctx := plainContext(c)
	org, err := s.linkOrg(ctx, token)
	if err == nil && org.BrandOrZero().Logo == nil {
		err = kv.Errorf(kv.ENOTFOUND, "not_found", "No logo.")
	}
	var logo kv.Logo
	if err == nil {
		logo, err = s.DB.FindLogo(ctx, org.ID)
	}
	if err != nil {
		s.participantAssetMissing(c, err)
		return
	}
	s.serveParticipantAsset(c, logo.MediaType, logo.Version, logo.Data)
}

// plainContext is the request's context for a handler outside a surface's pipeline:
// it ends when the server stops, never with c (which must not go below server).
func plainContext(c *fasthttp.RequestCtx) context.Context {
	if ctx := pipeline.InfoOf(c).Ctx; ctx != nil {
		return ctx
	}
	return context.Background()
}

// participantAssetMissing answers a brand file that is not there: 404, or 500 when the
// store failed.
func (s *Pages) participantAssetMissing(c *fasthttp.RequestCtx, err error) {
	setAPIHeaders(c)
	status := fasthttp.StatusNotFound
	if err != nil && pipeline.ToAPIError(err).Status != fasthttp.StatusNotFound {
		pipeline.InfoOf(c).Err = err.Error()
		status = fasthttp.StatusInternalServerError
	}
	c.SetStatusCode(status)
	c.SetContentType("text/plain; charset=utf-8")
	c.SetBodyString(strconv.Itoa(status))
}

// serveParticipantAsset sends a brand file. Its URL holds the link token, so it is
// cached privately only (never by a shared cache) and never sent on as a referrer; a
// URL carrying the current version may be kept for good, like the static files.
func (s *Pages) serveParticipantAsset(c *fasthttp.RequestCtx, contentType, version string, body []byte) {
	h := &c.Response.Header
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	etag := `"` + version + `"`
	h.Set("ETag", etag)
	if string(c.QueryArgs().Peek("v")) == version {
		h.Set("Cache-Control", "private, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "private, no-cache")
	}
	if inm := c.Request.Header.Peek("If-None-Match"); len(inm) > 0 && bytes.Contains(inm, []byte(etag)) {
		c.SetStatusCode(fasthttp.StatusNotModified)
		return
	}
	c.SetStatusCode(fasthttp.StatusOK)
	c.SetContentType(contentType)
	c.SetBody(body)
}
