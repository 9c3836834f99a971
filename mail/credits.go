package mail

import (
	"html/template"
	"strconv"
	"strings"
	"sync"
)

// CreditsLow is the message to an organisation's owner when a live interview took its
// credits under the warning they set.
func CreditsLow(to, orgName string, balance, threshold int, baseURL string) Message {
	left := strconv.Itoa(balance) + " credits are"
	if balance == 1 {
		left = "1 credit is"
	}
	page := strings.TrimRight(baseURL, "/") + "/app/settings/credits"
	text := orgName + " is running low on interviewd credits: " + left + " left (you asked to be told\n" +
		"under " + strconv.Itoa(threshold) + "). Each live interview uses one; when none are left, invite links\n" +
		"say the study is not accepting responses.\n\n" +
		"Whoever runs your interviewd server adds credits with `interviewd credits add`.\n\n" +
		"Credit history and the warning: " + page + "\n"
	return Message{To: to, Subject: oneLine(orgName) + ": " + left + " left on interviewd", Text: text,
		HTML: render(creditsHTML(), map[string]string{"Org": orgName, "Left": left, "Threshold": strconv.Itoa(threshold), "URL": page})}
}

var creditsHTML = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("credits").Parse(`<!doctype html>
<html><body style="font-family:system-ui,sans-serif;color:#1a1a1a">
<p><strong>{{.Org}}</strong> is running low on interviewd credits: {{.Left}} left (you asked to be told under {{.Threshold}}).</p>
<p>Each live interview uses one; when none are left, invite links say the study is not accepting responses. Whoever runs your interviewd server adds credits with <code>interviewd credits add</code>.</p>
<p><a href="{{.URL}}">Credit history and the warning</a></p>
</body></html>`))
})
