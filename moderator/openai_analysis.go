package moderator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
)

// CompleteJSON asks the model for one JSON object matching schema, with the given
// system and user messages, and returns the object's bytes. It is how the analysis
// engine talks to the endpoint (analysis.Completer), with this client's timeouts,
// retries and error handling. The schema's "title", when present, names the
// response format and is not sent as part of the schema.
//
// It returns an error wrapping ErrRefused when the model declines, an error naming
// the HTTP status for a rejected request, and otherwise the last failure (a reply
// that is not a JSON object counts as one) once the retries are spent.
func (o *OpenAI) CompleteJSON(ctx context.Context, system, user string, schema map[string]any) ([]byte, error) {
	name := "analysis"
	if t, ok := schema["title"].(string); ok && t != "" {
		name = t
	}
	s := maps.Clone(schema)
	delete(s, "title")
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("model endpoint: encoding the schema: %w", err)
	}
	body := chatRequest{
		Model:          o.model,
		Messages:       []chatMessage{{Role: "system", Content: system}, {Role: "user", Content: user}},
		Temperature:    chatTemperature(0),
		ResponseFormat: chatFormat(name, string(raw)),
	}
	return chatCall(ctx, o, body, decodeJSONObject)
}

// decodeJSONObject returns content (unfenced) when it is one JSON object, and an
// error wrapping errChatInvalid otherwise.
func decodeJSONObject(content string) ([]byte, error) {
	b := []byte(chatUnfence(content))
	if !json.Valid(b) || !bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		return nil, fmt.Errorf("%w: the reply is not a JSON object", errChatInvalid)
	}
	return b, nil
}
