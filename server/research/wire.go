package research

import (
	json "github.com/goccy/go-json"

	"interviewd/kv"
	"interviewd/server/pipeline"
)

// Whoami describes the calling credential. API keys leave grant_id and client_id out;
// OAuth connections carry them. Live API keys add the organisation's credits.
type Whoami struct {
	KeyID          *kv.ID         `json:"key_id"`
	KeyName        *string        `json:"key_name"`
	ExpiresAt      *pipeline.Time `json:"expires_at"`
	OrgID          kv.ID          `json:"org_id"`
	OrgName        string         `json:"org_name"`
	Environment    string         `json:"environment" enum:"test,live"`
	Scopes         []string       `json:"scopes"`
	CredentialType string         `json:"credential_type" enum:"api_key,oauth"`
	GrantID        *kv.ID         `json:"grant_id,omitempty"`
	ClientID       *string        `json:"client_id,omitempty"`
	// Credits is present for API keys in the live environment only: credits are spent
	// there alone, and the OAuth shape is the spec's, field for field.
	Credits *int `json:"credits,omitempty" doc:"The organisation's remaining interview credits (one is spent when a live interview starts). Present for live-environment API keys only; absent for test keys and OAuth connections."`
}

// StudySummary is a study in a list.
type StudySummary struct {
	ID         kv.ID          `json:"id"`
	Name       string         `json:"name"`
	Mode       kv.Mode        `json:"mode" enum:"test,live,paused,closed"`
	LaunchedAt *pipeline.Time `json:"launched_at"`
	CreatedAt  pipeline.Time  `json:"created_at"`
	UpdatedAt  pipeline.Time  `json:"updated_at"`
}

// StudyDetail is one study with its current brief (null until authored).
type StudyDetail struct {
	StudySummary
	Brief *kv.Brief `json:"brief" component:"Brief"`
	// encoded, when set, is this detail's JSON, rendered once and served as is while
	// the stored study stays the same (see studyRenders).
	encoded []byte
}

// PlainStudyDetail encodes a StudyDetail field by field.
type PlainStudyDetail StudyDetail

// MarshalJSON returns the rendered JSON when there is one, so every encoder of a
// StudyDetail gives the same bytes whichever way it was built.
func (d StudyDetail) MarshalJSON() ([]byte, error) {
	if d.encoded != nil {
		return d.encoded, nil
	}
	return json.MarshalNoEscape(PlainStudyDetail(d))
}

func (d StudyDetail) EncodedJSON() []byte { return d.encoded }

// InviteLink is a study's single durable invite link.
type InviteLink struct {
	URL  string  `json:"url"`
	Mode kv.Mode `json:"mode" enum:"test,live,paused,closed"`
}

func studySummary(st kv.Study) StudySummary {
	return StudySummary{
		ID: st.ID, Name: st.Name, Mode: st.Mode, LaunchedAt: pipeline.WireTimePtr(st.LaunchedAt),
		CreatedAt: pipeline.WireTime(st.CreatedAt), UpdatedAt: pipeline.WireTime(st.UpdatedAt),
	}
}

func NewStudyDetail(st kv.Study) StudyDetail {
	d := StudyDetail{StudySummary: studySummary(st)}
	if st.Brief != nil {
		b := st.Brief.Normalised()
		d.Brief = &b
	}
	return d
}
