package server

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"interviewd/sms"
	"interviewd/sms/smstest"
)

// TestAppBrowserTwoStepBySMS adds a phone in Settings → Security (a refused number
// first, then the code typed back with the keyboard), signs in again in another browser
// and passes two-step with the texted code, then removes the phone. Every page passes
// axe.
func TestAppBrowserTwoStepBySMS(t *testing.T) {
	texts := smstest.Start(t)
	sender, err := sms.New(texts.URL)
	if err != nil {
		t.Fatal(err)
	}
	e := mustServeApp(t, withSMS(sender))

	b := e.signedIn(t, "a@example.com", "Org A", "live")
	b.open("/app/settings/security")
	checkAxe(t, b)
	b.fill("#phone", "07700 900123")
	b.submit("form[action='/app/settings/security/phone'] button[type=submit]", "/app/settings/security")
	if got := b.text("#form-errors"); !strings.Contains(got, "international form") {
		t.Fatalf("a national number: %q", got)
	}
	if v := eval[string](b.page, "the typed number", `document.querySelector('#phone').value`); v != "07700 900123" {
		t.Fatalf("the field after a refusal holds %q", v)
	}
	checkAxe(t, b)

	b.fill("#phone", "+44 7700 900123")
	b.submit("form[action='/app/settings/security/phone'] button[type=submit]", "/app/settings/security")
	// The code field has the focus: the code is typed and sent with the keyboard alone.
	b.waitFor("the code field to have the focus", `document.activeElement && document.activeElement.id === 'phone-code'`)
	checkAxe(t, b)
	checkAxeDark(t, b)
	code := texts.Next(t, "+447700900123").Code()
	b.do("type the code", chromedp.KeyEvent(code))
	b.do("mark", chromedp.Evaluate[chromedp.Void](`window.__stale = true`))
	b.do("press Enter", chromedp.KeyEvent(kb.Enter))
	b.waitFor("the security page", `!window.__stale && location.search === '?done=phone_added' && document.readyState === 'complete'`)
	if got := b.text("#phone-number"); got != "+447700900123" {
		t.Fatalf("the phone shown: %q", got)
	}
	if got := b.text("main"); !strings.Contains(got, "Text messages are on") {
		t.Fatalf("no confirmation: %q", got)
	}
	checkAxe(t, b)
	checkAxeDark(t, b)

	// Another browser signs in: the check texts a code.
	b2 := e.browser(t)
	b2.signIn("a@example.com")
	b2.waitPath("/app/twostep")
	if got := b2.text("main"); !strings.Contains(got, "ending 0123") {
		t.Fatalf("the check does not name the phone: %q", got)
	}
	checkAxe(t, b2)
	b2.submit("form[action='/app/twostep/sms'] button[type=submit]", "/app/twostep")
	b2.waitFor("the code field", `!!document.querySelector('#code')`)
	checkAxe(t, b2)
	code = texts.Next(t, "+447700900123").Code()
	b2.fill("#code", code[:5]+string('0'+(code[5]-'0'+1)%10))
	b2.submit("form[action='/app/twostep'] button[type=submit]", "/app/twostep")
	if !strings.Contains(b2.text("#form-errors"), "not right") {
		t.Fatalf("a wrong texted code: %q", b2.text("main"))
	}
	checkAxe(t, b2)
	b2.fill("#code", code)
	b2.submit("form[action='/app/twostep'] button[type=submit]", "/app/studies")

	// Remove the phone: the page asks first, and a no keeps it.
	b.do("decline confirms", chromedp.Evaluate[chromedp.Void](`window.__asked = []; window.confirm = function (q) { window.__asked.push(q); return false; }`))
	b.do("click remove", chromedp.Click(chromedp.CSS("form[action='/app/settings/security/phone/remove'] button[type=submit]")))
	if q := eval[[]string](b.page, "questions", `window.__asked`); len(q) != 1 || !strings.Contains(q[0], "Stop texting sign-in codes to +447700900123?") {
		t.Fatalf("questions asked: %v", q)
	}
	b.acceptConfirms()
	b.submit("form[action='/app/settings/security/phone/remove'] button[type=submit]", "/app/settings/security")
	if got := b.text("main"); !strings.Contains(got, "Phone number removed") {
		t.Fatalf("after removing: %q", got)
	}
	if n := eval[int](b.page, "add form", `document.querySelectorAll('#phone').length`); n != 1 {
		t.Fatal("the add-a-number form is not offered again")
	}
	checkAxe(t, b)
}
