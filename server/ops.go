package server

// operations is the table of research operations. Every surface binds from it; adding
// an operation here is all it takes to expose it over REST, MCP and A2A and to document
// it in OpenAPI.
func (s *Server) operations() []*Operation {
	return []*Operation{
		op(Operation{Name: "whoami", Summary: "Describe the calling credential", Method: "GET", Path: "/v1/api/me"}, s.whoami),
		op(Operation{Name: "list_studies", Summary: "List studies, newest created first", Method: "GET", Path: "/v1/api/studies", Scope: "studies:read"}, s.listStudies),
		op(Operation{Name: "get_study", Summary: "Get a study with its current brief", Method: "GET", Path: "/v1/api/studies/{study_id}", Scope: "studies:read"}, s.getStudy),
		op(Operation{Name: "get_interview_link", Summary: "Get the study's durable invite link", Method: "GET", Path: "/v1/api/studies/{study_id}/interview-link", Scope: "links:read"}, s.getInterviewLink),
	}
}
