package a2a

import (
	"interviewd/server/pipeline"
	"regexp"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	json "github.com/goccy/go-json"
)

// a2aIntent is what a message asks for: a skill (an operation of the research table)
// and its arguments, as the data part {"skill": ..., "arguments": {...}} carries them.
type a2aIntent struct {
	Skill     string          `json:"skill"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// messageIntent finds what a message asks for: its first data part that names a skill,
// else its text read by the built-in engine. ok is false when neither says.
func messageIntent(msg *a2a.Message) (in a2aIntent, text string, ok bool, err error) {
	var texts []string
	for _, part := range msg.Parts {
		if part == nil {
			continue
		}
		switch c := part.Content.(type) {
		case a2a.Data:
			obj, isObj := c.Value.(map[string]any)
			if !isObj {
				continue
			}
			skill, named := obj["skill"].(string)
			if !named {
				continue
			}
			in = a2aIntent{Skill: skill}
			if args, has := obj["arguments"]; has && args != nil {
				if _, isArgs := args.(map[string]any); !isArgs {
					return in, "", false, errArgumentsNotObject
				}
				if in.Arguments, err = json.MarshalNoEscape(args); err != nil {
					return in, "", false, err
				}
			}
			return in, "", true, nil
		case a2a.Text:
			texts = append(texts, string(c))
		}
	}
	text = strings.TrimSpace(strings.Join(texts, "\n"))
	in, ok = PlainIntent(text)
	return in, text, ok, nil
}

var errArgumentsNotObject = &pipeline.APIError{Status: 422, Code: "validation_error", Detail: `The data part's "arguments" must be a JSON object.`}

// The built-in engine's plain-text requests: deliberately few and literal, so what it
// understands is predictable; anything else asks back naming the skills. They compile on
// the first plain-text message, not at start-up: most servers never see one.
var plainPatterns = sync.OnceValue(func() (p struct{ create, status, get, list, whoami *regexp.Regexp }) {
	p.create = regexp.MustCompile(`(?is)^\s*(?:please\s+)?(?:create|make|design|author|draft|set\s+up|start)\s+(?:me\s+)?(?:a\s+|an\s+)?(?:new\s+)?(?:research\s+)?(?:study|interview\s+study)\s+(?:about|on|into|for|to|exploring)\s+(\S.*)$`)
	p.status = regexp.MustCompile(`(?i)\b(?:status|state|progress|details?)\s+(?:of|for)\s+(?:the\s+)?study\s+([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b`)
	p.get = regexp.MustCompile(`(?i)^\s*(?:get|show|describe)\s+(?:the\s+)?study\s+([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\s*\.?\s*$`)
	p.list = regexp.MustCompile(`(?i)^\s*(?:list|show)\s+(?:all\s+)?(?:my\s+|our\s+|the\s+)?studies\s*\.?\s*$`)
	p.whoami = regexp.MustCompile(`(?i)^\s*who\s*am\s*i\s*\??\s*$`)
	return p
})

// plainExamples are the plain-text requests the agent card shows per skill.
var plainExamples = map[string][]string{
	"create_study": {"Create a study about why customers cancel their subscription in the first month"},
	"get_study":    {"Status of study <study_id>"},
	"list_studies": {"List my studies"},
	"whoami":       {"Who am I?"},
}

// PlainIntent maps a plain-text request to a skill, or reports it cannot.
func PlainIntent(text string) (a2aIntent, bool) {
	if text == "" {
		return a2aIntent{}, false
	}
	plain := plainPatterns()
	if m := plain.create.FindStringSubmatch(text); m != nil {
		// The whole request is the guidance: the author reads the goal in its words.
		return a2aIntent{Skill: "create_study", Arguments: pipeline.MustRawJSON(map[string]string{"guidance": text})}, true
	}
	for _, re := range []*regexp.Regexp{plain.status, plain.get} {
		if m := re.FindStringSubmatch(text); m != nil {
			return a2aIntent{Skill: "get_study", Arguments: pipeline.MustRawJSON(map[string]string{"study_id": strings.ToLower(m[1])})}, true
		}
	}
	if plain.list.MatchString(text) {
		return a2aIntent{Skill: "list_studies"}, true
	}
	if plain.whoami.MatchString(text) {
		return a2aIntent{Skill: "whoami"}, true
	}
	return a2aIntent{}, false
}
