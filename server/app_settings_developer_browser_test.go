package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"interviewd/kv"
)

// allowClipboard lets the page read and write the clipboard without asking, as a
// person who allowed it would.
func (b appTab) allowClipboard() {
	b.t.Helper()
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		b.do("allow "+name, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, browser.SetPermission, browser.SetPermissionParams{
				Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted,
				Origin: b.e.url, BrowserContextID: chromedp.FromContext(ctx).BrowserContextID})
			return err
		}))
	}
}

// clickRowButton clicks the button sel in the table row that mentions text.
func (b appTab) clickRowButton(text, sel, next string) {
	b.t.Helper()
	b.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.__stale = true`))
	ok := eval[bool](b.page, "click in the row of "+text, fmt.Sprintf(`(function(){
		var row = Array.from(document.querySelectorAll('tr, li')).find(function (r) { return r.textContent.indexOf(%q) >= 0 && r.querySelector(%q); });
		if (!row) { return false; }
		row.querySelector(%q).click();
		return true;
	})()`, text, sel, sel))
	if !ok {
		b.t.Fatalf("no row mentions %q with %s", text, sel)
	}
	b.waitFor("the next page", fmt.Sprintf(`!window.__stale && location.pathname.indexOf(%q) === 0 && document.readyState === 'complete'`, next))
}

// TestAppBrowserKeys creates a key, copies its secret (shown once), uses it on the REST
// API, revokes it and sees the API refuse it at once; a member sees only their own keys
// and cannot tick the scopes their role rules out.
func TestAppBrowserKeys(t *testing.T) {
	e := mustServeApp(t)
	e.mustMember(e.orgA.ID, "member@a.example", kv.RoleMember)

	owner := e.signedIn(t, "a@example.com", "Org A", "live")
	owner.open("/app/settings/developer")
	checkAxe(t, owner)
	owner.fill("#key-name", "Analysis notebook")
	for _, sc := range []string{kv.ScopeStudiesRead, kv.ScopeExportRead} {
		owner.do("tick "+sc, chromedp.Click(chromedp.CSS(fmt.Sprintf(`input[name=scopes][value=%q]`, sc))))
	}
	owner.do("expiry", chromedp.SetValue(chromedp.CSS("#key-expiry"), "30"))
	owner.submit("form[action='/app/settings/developer/keys'] button[type=submit]", "/app/settings/developer")
	secret := eval[string](owner.page, "read the secret", `document.querySelector('#new-secret').value`)
	if !strings.HasPrefix(secret, "jsk_live_") {
		t.Fatalf("secret %q", secret)
	}
	checkAxe(t, owner)
	checkAxeDark(t, owner)

	owner.allowClipboard()
	owner.do("copy", chromedp.Click(chromedp.CSS(`button[data-copy="#new-secret"]`)))
	owner.waitFor("the copy to be confirmed", `document.getElementById('copy-status').textContent === 'Copied to the clipboard.'`)
	copied, err := chromedp.Run(owner.ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("read the clipboard: %v", err)
	}
	if copied != secret {
		t.Fatalf("clipboard holds %q, want the secret", copied)
	}

	if r := e.do("GET", "/v1/api/me", "Bearer "+secret, ""); r.status != 200 || !strings.Contains(string(r.body), `"key_name":"Analysis notebook"`) {
		t.Fatalf("the new key on the API: %d %s", r.status, r.body)
	}

	// Reloading shows the key without its secret.
	owner.open("/app/settings/developer")
	if owner.visible("#new-secret") || strings.Contains(owner.text("main"), secret) {
		t.Fatal("the secret is shown again after a reload")
	}

	// Revoking asks first; saying no keeps the key.
	owner.do("decline confirms", chromedp.Evaluate[chromedp.Void](`window.__asked = []; window.confirm = function (q) { window.__asked.push(q); return false; }`))
	eval[bool](owner.page, "click revoke", `(function(){
		var row = Array.from(document.querySelectorAll('tr')).find(function (r) { return r.textContent.indexOf('Analysis notebook') >= 0; });
		row.querySelector('button.danger').click(); return true; })()`)
	if q := eval[[]string](owner.page, "questions", `window.__asked`); len(q) != 1 || !strings.Contains(q[0], "Revoke the key") {
		t.Fatalf("revoke asked %q", q)
	}
	if r := e.do("GET", "/v1/api/me", "Bearer "+secret, ""); r.status != 200 {
		t.Fatalf("declined revoke: the key answers %d", r.status)
	}
	owner.acceptConfirms()
	owner.clickRowButton("Analysis notebook", "button.danger", "/app/settings/developer")
	if got := owner.text(".flash"); !strings.Contains(got, "Key revoked") {
		t.Fatalf("flash after revoking: %q", got)
	}
	if r := e.do("GET", "/v1/api/me", "Bearer "+secret, ""); r.status != 401 {
		t.Fatalf("the revoked key on the API: %d %s, want 401 at once", r.status, r.body)
	}

	// A member: only their own keys, and no studies:golive or export:read.
	member := e.signedIn(t, "member@a.example", "Org A", "live")
	member.open("/app/settings/developer")
	if n := eval[int](member.page, "count keys", `document.querySelectorAll('tr[data-key]').length`); n != 0 {
		t.Fatalf("a member with no keys sees %d keys", n)
	}
	for _, sc := range []string{kv.ScopeStudiesGoLive, kv.ScopeExportRead} {
		if !eval[bool](member.page, "scope "+sc, fmt.Sprintf(`document.querySelector('input[name=scopes][value=%q]').disabled`, sc)) {
			t.Fatalf("a member may tick %s", sc)
		}
	}
	checkAxe(t, member)
	member.fill("#key-name", "Member key")
	member.do("tick", chromedp.Click(chromedp.CSS(`input[name=scopes][value="studies:read"]`)))
	member.submit("form[action='/app/settings/developer/keys'] button[type=submit]", "/app/settings/developer")
	if !member.visible("#new-secret") {
		t.Fatalf("member's key not created: %s", member.text("main"))
	}
	names := eval[[]string](member.page, "key names", `Array.from(document.querySelectorAll('tr[data-key] th')).map(function(th){return th.childNodes[0].textContent.trim()})`)
	if len(names) != 1 || names[0] != "Member key" {
		t.Fatalf("a member sees keys %v, want only their own", names)
	}

	// The owner sees the member's key, with who made it.
	owner.open("/app/settings/developer")
	if !strings.Contains(owner.text("main"), "member@a.example") {
		t.Fatal("the owner does not see the member's key")
	}
}
