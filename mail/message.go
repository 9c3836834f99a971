package mail

import (
	"bytes"
	"html/template"
	"strings"
	"sync"
	"time"
)

// The messages interviewd sends. Each subject says what the message is for; codes are in
// the subject too, so a phone's notification (and the offline sender's log line) is
// enough. HTML goes through html/template: an organisation's name is the sender's
// choice, not ours.

// SignInCode is the message carrying a sign-in code.
func SignInCode(to, code, baseURL string) Message {
	text := "Your interviewd sign-in code is:\n\n    " + code + "\n\n" +
		"It works once, for 10 minutes. Enter it on the sign-in page" + atSite(baseURL) + ".\n\n" +
		"If you did not ask to sign in, ignore this message: nobody can sign in without the code.\n"
	return Message{To: to, Subject: "Your interviewd sign-in code: " + code, Text: text,
		HTML: render(codeHTML(), map[string]string{"Lead": "Your interviewd sign-in code is", "Code": code,
			"Note": "It works once, for 10 minutes. If you did not ask to sign in, ignore this message."})}
}

// TwoStepCode is the message carrying a two-step code (the email fallback).
func TwoStepCode(to, code string) Message {
	text := "Your interviewd two-step verification code is:\n\n    " + code + "\n\n" +
		"It works once, for 10 minutes. If you did not just sign in, someone has your sign-in\n" +
		"code or session: sign out of other sessions in Settings → Security.\n"
	return Message{To: to, Subject: "Your interviewd verification code: " + code, Text: text,
		HTML: render(codeHTML(), map[string]string{"Lead": "Your interviewd two-step verification code is", "Code": code,
			"Note": "It works once, for 10 minutes. If you did not just sign in, sign out of other sessions in Settings → Security."})}
}

// AccessCode is the message carrying the code an application (an AI agent, a script)
// needs to get an API key for this address through the account access API. The
// application's name is its own claim, so the message quotes it as such and says what
// reading the code back would let it do.
func AccessCode(to, code, clientName string) Message {
	client := oneLine(clientName)
	text := "An application calling itself \"" + client + "\" asked for an interviewd API key for this email address.\n\n" +
		"If that was you, or an agent working for you, give it this code:\n\n    " + code + "\n\n" +
		"It works once, for 30 minutes. With it the application can sign in as you (an account is\n" +
		"made for this address if there is none) and create an API key. If you did not ask for\n" +
		"this, do not share the code and ignore this message.\n"
	return Message{To: to, Subject: "Your interviewd access code: " + code, Text: text,
		HTML: render(codeHTML(), map[string]string{"Lead": "An application calling itself \u201c" + client + "\u201d asked for an interviewd API key for this email address. If that was you, give it this code", "Code": code,
			"Note": "It works once, for 30 minutes. With it the application can sign in as you and create an API key. If you did not ask for this, do not share the code and ignore this message."})}
}

// Invitation is the message inviting someone to an organisation.
func Invitation(to, orgName, inviter, role, acceptURL string, expires time.Time) Message {
	by := ""
	if inviter != "" {
		by = inviter + " invited you"
	} else {
		by = "You are invited"
	}
	date := expires.UTC().Format("2 January 2006")
	text := by + " to join " + orgName + " on interviewd as " + article(role) + " " + role + ".\n\n" +
		"Accept the invitation:\n" + acceptURL + "\n\n" +
		"The link works once, until " + date + ". If you were not expecting this, ignore it.\n"
	return Message{To: to, Subject: "Join " + oneLine(orgName) + " on interviewd", Text: text,
		HTML: render(inviteHTML(), map[string]string{"By": by, "Org": orgName, "Role": role, "Article": article(role), "URL": acceptURL, "Date": date})}
}

func atSite(baseURL string) string {
	if baseURL == "" {
		return ""
	}
	return " (" + strings.TrimRight(baseURL, "/") + "/app/signin)"
}

func article(role string) string {
	if role != "" && strings.ContainsRune("aeiou", rune(role[0])) {
		return "an"
	}
	return "a"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// The mail bodies are parsed when the first mail is written, not at every start.
var (
	codeHTML = sync.OnceValue(func() *template.Template {
		return template.Must(template.New("code").Parse(`<!doctype html>
<html><body style="font-family:system-ui,sans-serif;color:#1a1a1a">
<p>{{.Lead}}:</p>
<p style="font-size:28px;font-weight:700;letter-spacing:4px">{{.Code}}</p>
<p>{{.Note}}</p>
</body></html>`))
	})
	inviteHTML = sync.OnceValue(func() *template.Template {
		return template.Must(template.New("invite").Parse(`<!doctype html>
<html><body style="font-family:system-ui,sans-serif;color:#1a1a1a">
<p>{{.By}} to join <strong>{{.Org}}</strong> on interviewd as {{.Article}} {{.Role}}.</p>
<p><a href="{{.URL}}">Accept the invitation</a></p>
<p>The link works once, until {{.Date}}. If you were not expecting this, ignore it.</p>
</body></html>`))
	})
)

func render(t *template.Template, data map[string]string) string {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return "" // the templates are fixed and take only strings: cannot fail
	}
	return b.String()
}
