package analysis

import (
	"reflect"
	"testing"
)

// TestResearcherCodes: spans become quotes in interview, message and position order;
// spans of interviews not included, of interviewer messages or not exactly in their
// message are left out; counts, share and segments follow the quoted interviews.
func TestResearcherCodes(t *testing.T) {
	in := Input{Interviews: []Interview{
		{ID: "b", Context: map[string]string{"plan": "pro"}, Messages: []Message{{SpeakerInterviewer, "When do you plan?"}, {SpeakerParticipant, "On Sundays, with [EMAIL]."}}},
		{ID: "a", Context: map[string]string{"plan": "free"}, Messages: []Message{{SpeakerInterviewer, "When?"}, {SpeakerParticipant, "Sundays, then Mondays."}}},
		{ID: "c", Context: map[string]string{"plan": "free"}, Messages: []Message{{SpeakerInterviewer, "When?"}, {SpeakerParticipant, "Never."}}},
	}, Codes: []Code{
		{ID: "t1", Name: "Weekend", Spans: []CodedSpan{
			{InterviewID: "a", MessageIndex: 1, Start: 14, Text: "Mondays", Note: "not weekend"},
			{InterviewID: "a", MessageIndex: 1, Start: 0, Text: "Sundays"},
			{InterviewID: "b", MessageIndex: 1, Start: 3, Text: "Sundays", Note: "ritual"},
			{InterviewID: "gone", MessageIndex: 1, Text: "Sundays"},
			{InterviewID: "b", MessageIndex: 0, Text: "plan"},
			{InterviewID: "c", MessageIndex: 1, Text: "zoe@example.com"},
			{InterviewID: "c", MessageIndex: 9, Text: "Never"},
		}},
		{ID: "t2", Name: "Unused"},
	}}
	got := ResearcherCodes(in)
	want := []ResearcherCode{
		{ID: "t1", Name: "Weekend", InterviewCount: 2, Share: share(2, 3), Segments: map[string]map[string]int{"plan": {"pro": 1, "free": 1}},
			Quotes: []CodedQuote{
				{InterviewID: "b", MessageIndex: 1, Text: "Sundays", Note: "ritual"},
				{InterviewID: "a", MessageIndex: 1, Text: "Sundays"},
				{InterviewID: "a", MessageIndex: 1, Text: "Mondays", Note: "not weekend"},
			}},
		{ID: "t2", Name: "Unused", Quotes: []CodedQuote{}, Segments: map[string]map[string]int{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if ResearcherCodes(Input{Interviews: in.Interviews}) != nil {
		t.Fatal("codes for an input without any")
	}
}
