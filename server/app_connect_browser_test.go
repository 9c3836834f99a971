package server

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestAppBrowserConnectAssistant: in a real browser, on a phone and on a laptop,
// Settings → Connected apps passes axe (light and dark) with no CSP refusal, and each
// Copy button puts on the clipboard exactly what it shows: the MCP address this
// browser reaches the server at (no --base-url: the loopback name it used) and each
// client's configuration naming it.
func TestAppBrowserConnectAssistant(t *testing.T) {
	e := mustServeApp(t, withDerivedBaseURL())
	mcpURL := e.url + "/v1/mcp" // the browser uses http://127.0.0.1:PORT
	for _, vp := range []struct{ w, h int64 }{{390, 844}, {1280, 800}} {
		t.Run(fmt.Sprintf("%dx%d", vp.w, vp.h), func(t *testing.T) {
			b := e.browserAt(t, vp.w, vp.h)
			b.signIn("a@example.com")
			b.chooseWorkspace("Org A", "live")
			b.watchCSP()
			b.open("/app/settings/apps")
			if got := b.text("#connect-h"); got != "Connect an assistant" {
				t.Fatalf("no Connect an assistant section: %q", got)
			}
			checkAxeAll(t, b)
			checkAxeDark(t, b)
			noCSPViolations(t, b)

			b.allowClipboard()
			copied := connectShown{snippets: map[string]string{}}
			for _, c := range []struct{ target, status string }{
				{"#mcp-url", "mcp-url-status"},
				{"#snippet-claude", "snippet-claude-status"},
				{"#snippet-vscode", "snippet-vscode-status"},
				{"#snippet-cursor", "snippet-cursor-status"},
			} {
				// Something else on the clipboard first, so a copy that did nothing shows.
				b.do("clear the clipboard", chromedp.Evaluate[chromedp.Void](`navigator.clipboard.writeText('stale')`, chromedp.EvalAwaitPromise))
				b.do("copy "+c.target, chromedp.Click(chromedp.CSS(fmt.Sprintf(`button[data-copy=%q]`, c.target))))
				b.waitFor("the copy of "+c.target+" to be confirmed", fmt.Sprintf(`document.getElementById(%q).textContent === 'Copied to the clipboard.'`, c.status))
				text, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
				if err != nil {
					t.Fatalf("read the clipboard: %v", err)
				}
				if c.target == "#mcp-url" {
					copied.url = text
				} else {
					copied.snippets[c.target[len("#snippet-"):]] = text
				}
			}
			wantSnippets(t, copied, mcpURL)
			noCSPViolations(t, b)
		})
	}
}
