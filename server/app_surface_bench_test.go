package server

import (
	"context"
	"testing"

	"github.com/valyala/fasthttp"

	"interviewd/kv"
	"interviewd/server/app"
)

// BenchmarkAppSettingsPage renders a signed-in app page in-process: the session
// cookie resolved, the page built from kv and rendered in the layout. "/app" is the
// session alone (resolved, then a redirect): the floor every app page stands on.
func BenchmarkAppSettingsPage(b *testing.B) {
	for _, path := range []string{"/app", "/app/settings/developer", "/app/settings/members"} {
		b.Run(path[len("/app"):], func(b *testing.B) {
			srv, _, _ := benchServer(b, 0)
			ctx := context.Background()
			orgs, err := srv.DB.FindOrgs(ctx)
			if err != nil || len(orgs) != 1 {
				b.Fatal(orgs, err)
			}
			code, err := srv.DB.RequestSignInCode(ctx, "b@example.com", "")
			if err != nil {
				b.Fatal(err)
			}
			start, err := srv.DB.SignIn(ctx, kv.SignInInput{Email: "b@example.com", Code: code.Code})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := srv.DB.ChooseWorkspace(ctx, kv.WorkspaceInput{Token: start.Token, OrgID: orgs[0].ID, Environment: kv.EnvLive}); err != nil {
				b.Fatal(err)
			}
			h := srv.Handler()
			var c fasthttp.RequestCtx
			c.Request.Header.SetMethod("GET")
			c.Request.SetRequestURI(path)
			c.Request.Header.SetCookie(app.SessionCookie, start.Token)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c.Response.Reset()
				h(&c)
				if st := c.Response.StatusCode(); st != 200 && !(path == "/app" && st == 303) {
					b.Fatalf("status %d %s", c.Response.StatusCode(), c.Response.Header.Peek("Location"))
				}
			}
		})
	}
}
