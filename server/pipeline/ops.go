package pipeline

import "interviewd/kv"

// Service is the research operations over the shared pipeline: the table's functions
// are its methods.
type Service struct {
	*Core
	// studyRenders keeps get_study answers by stored record (study_render.go).
	StudyRenders *studyRenders
}

// NewService makes the research operations over core.
func NewService(core *Core) *Service {
	return &Service{Core: core, StudyRenders: NewStudyRenders()}
}

// OperationTable is the table of research operations. Every surface binds from it; adding
// an operation here is all it takes to expose it over REST, MCP and A2A and to document
// it in OpenAPI. OperationID, Request, Response and the tag Public API are the hosted
// service's published names (its operationIds, component schemas and tag), so
// generated clients match; the operations interviewd adds carry a tag of their own.
func (s *Service) OperationTable() []*Operation {
	upload := op(Operation{Name: "upload_file", OperationID: "upload_file_v1_api_files_post", Tag: tagPublicAPI, Response: "FileUploadOut",
		Summary: "Upload a file whose text can inform authoring", Method: "POST", Path: "/v1/api/files", Scope: "studies:write", Write: true,
		Refusals: map[int]string{413: "payload_too_large: over 10 MB for .txt .md .csv, over 50 MB for other types."}}, s.uploadFile)

	upload.RESTBind = s.BindUpload
	download := op(Operation{Name: "get_export_download", OperationID: "download_export_job_v1_api_exports__job_id__download_get", Tag: tagPublicAPI,
		Summary: "Download a finished export: a signed URL valid 5 minutes (REST: the CSV inline unless Accept asks for JSON)", Method: "GET", Path: "/v1/api/exports/{job_id}/download", Scope: "export:read",
		Conflict: "export_not_ready: the export has not completed."}, s.getExportDownload)
	download.restRespond = s.respondDownload
	return []*Operation{
		op(Operation{Name: "whoami", OperationID: "whoami_v1_api_me_get", Tag: tagPublicAPI, Response: "WhoAmIOut",
			Summary: "Describe the calling credential", Method: "GET", Path: "/v1/api/me"}, s.whoami),
		op(Operation{Name: "list_studies", OperationID: "list_studies_v1_api_studies_get", Tag: tagPublicAPI, Response: "PublicStudySummary",
			Summary: "List studies, newest created first", Method: "GET", Path: "/v1/api/studies", Scope: "studies:read"}, s.listStudies),
		op(Operation{Name: "get_study", OperationID: "get_study_v1_api_studies__study_id__get", Tag: tagPublicAPI, Response: "PublicStudyDetail",
			Summary: "Get a study with its current brief", Method: "GET", Path: "/v1/api/studies/{study_id}", Scope: "studies:read"}, s.getStudy),
		op(Operation{Name: "create_study", OperationID: "create_study_v1_api_studies_post", Tag: tagPublicAPI, Request: "StudyGuidanceRequest", Response: "AuthoringJobOut",
			Summary: "Author a new study from plain-language guidance (a background job)", Method: "POST", Path: "/v1/api/studies", Scope: "studies:write", Write: true, Status: 202, Idempotent: true,
			Job: kv.JobAuthoring, Awaits: "get_authoring_status"}, s.createStudy),
		op(Operation{Name: "get_authoring_status", OperationID: "get_authoring_status_v1_api_studies_jobs__job_id__get", Tag: tagPublicAPI, Response: "AuthoringStatusOut",
			Summary: "Poll an authoring job; a refused or failed job answers 200 with status failed", Method: "GET", Path: "/v1/api/studies/jobs/{job_id}", Scope: "studies:read",
			Conflict: "authoring_unconfirmed: the job completed without a failure, yet its study change cannot be confirmed."}, s.getAuthoringStatus),
		op(Operation{Name: "refine_study", OperationID: "refine_study_v1_api_studies__study_id__refine_post", Tag: tagPublicAPI, Request: "StudyGuidanceRequest", Response: "AuthoringJobOut",
			Summary: "Refine a study's design with plain-language guidance (a background job)", Method: "POST", Path: "/v1/api/studies/{study_id}:refine", Scope: "studies:write", Write: true, Status: 202, Idempotent: true,
			Job: kv.JobAuthoring, Awaits: "get_authoring_status"}, s.refineStudy),
		op(Operation{Name: "update_study_brief", OperationID: "update_study_brief_v1_api_studies__study_id__brief_put", Tag: tagStudies, Request: "StudyBriefRequest", Response: "PublicStudyDetail",
			Summary: "Replace a study's brief (title, objectives, screener and verbatim questions, duration) with one written directly: the next design version at once; interviews already started keep theirs", Method: "PUT", Path: "/v1/api/studies/{study_id}/brief", Scope: "studies:write", Write: true, Idempotent: true,
			Conflict: "study_closed: the study is closed; set its mode to test or live to edit its brief."}, s.updateStudyBrief),
		op(Operation{Name: "get_participant_settings", OperationID: "get_participant_settings_v1_api_studies__study_id__participant_settings_get", Tag: tagStudies, Response: "ParticipantSettingsOut",
			Summary: "Get what a study's participants see around the interview: consent, welcome and thank-you texts, completion code and redirect", Method: "GET", Path: "/v1/api/studies/{study_id}/participant-settings", Scope: "studies:read"}, s.getParticipantSettings),
		op(Operation{Name: "update_participant_settings", OperationID: "update_participant_settings_v1_api_studies__study_id__participant_settings_put", Tag: tagStudies, Request: "ParticipantSettingsRequest", Response: "ParticipantSettingsOut",
			Summary: "Replace a study's participant settings (a field left out returns to its default): a consent step before the interview, welcome and thank-you texts, a completion code and an https redirect for panels", Method: "PUT", Path: "/v1/api/studies/{study_id}/participant-settings", Scope: "studies:write", Write: true, Idempotent: true}, s.updateParticipantSettings),
		op(Operation{Name: "set_study_mode", OperationID: "set_study_mode_v1_api_studies__study_id__mode_put", Tag: tagPublicAPI, Request: "StudyModeRequest", Response: "StudyModeOut",
			Summary: "Set a study's mode: test, live (Go live), paused or closed", Method: "PUT", Path: "/v1/api/studies/{study_id}/mode", Write: true, ScopeFor: modeScope, ScopeDoc: "studies:write; studies:golive to go live",
			AnyScope: []string{"studies:write", "studies:golive"}}, s.setStudyMode),
		upload,
		op(Operation{Name: "start_export", OperationID: "start_export_v1_api_exports_post", Tag: tagPublicAPI, Request: "ExportRequest", Response: "ExportJobAccepted",
			Summary: "Export a study's completed live interviews, redacted, or its analysis as a report or a REFI-QDA project (a background job)", Method: "POST", Path: "/v1/api/exports", Scope: "export:read", Write: true, Status: 202, Idempotent: true,
			Job: kv.JobExport, Awaits: "get_export_status",
			Conflict: "analysis_not_ready: an analysis format was asked for and the study has no completed analysis; study_not_live: the study has never been live (Test mode: no analysis).",
			Refusals: map[int]string{403: "insufficient_scope, or test_environment: test-environment credentials cannot export.", 404: "not_found, or analysis_not_found: no such study, or no such analysis_version."}}, s.startExport),
		op(Operation{Name: "get_export_status", OperationID: "get_export_job_v1_api_exports__job_id__get", Tag: tagPublicAPI, Response: "ExportJobStatus",
			Summary: "Poll an export", Method: "GET", Path: "/v1/api/exports/{job_id}", Scope: "export:read"}, s.getExportStatus),
		download,
		op(Operation{Name: "start_analysis", OperationID: "start_analysis_v1_api_studies__study_id__analysis_post", Tag: tagAnalysis, Response: "AnalysisJobAccepted",
			Summary: "Analyse a live study's completed interviews into findings (a background job); a study's analysis already queued or running is returned instead of a second", Method: "POST", Path: "/v1/api/studies/{study_id}/analysis", Scope: "export:read", Write: true, Status: 202, Idempotent: true,
			Job: kv.JobAnalysis, Awaits: "get_analysis_status",
			Conflict: "study_not_live: the study has never been live (Test mode: no analysis).",
			Refusals: map[int]string{403: "insufficient_scope, or test_environment: test-environment credentials cannot analyse.", 429: "rate_limited, or analysis_limit: the organisation already runs 3 analyses."}}, s.startAnalysis),
		op(Operation{Name: "get_analysis_status", OperationID: "get_analysis_status_v1_api_analyses__job_id__get", Tag: tagAnalysis, Response: "AnalysisJobStatus",
			Summary: "Poll an analysis job: its status, the version it stored or why it failed", Method: "GET", Path: "/v1/api/analyses/{job_id}", Scope: "export:read"}, s.getAnalysisStatus),
		op(Operation{Name: "get_analysis", OperationID: "get_analysis_v1_api_studies__study_id__analysis_get", Tag: tagAnalysis, Response: "StudyAnalysis",
			Summary: "Get a study's latest completed analysis, or a given version: findings per objective with quotes for and against, themes, answers per question, suggestions", Method: "GET", Path: "/v1/api/studies/{study_id}/analysis", Scope: "export:read",
			Conflict: "study_not_live: the study has never been live (Test mode: no analysis).",
			Refusals: map[int]string{403: "insufficient_scope, or test_environment: test-environment credentials have no analysis.", 404: "not_found, or analysis_not_found: no completed analysis (or no such version) yet."}}, s.getAnalysis),
		op(Operation{Name: "list_tags", OperationID: "list_tags_v1_api_studies__study_id__tags_get", Tag: tagTranscripts, Response: "Tag",
			Summary: "List a study's tags (its codes for annotating transcripts), oldest first", Method: "GET", Path: "/v1/api/studies/{study_id}/tags", Scope: "export:read"}, s.listTags),
		op(Operation{Name: "create_tag", OperationID: "create_tag_v1_api_studies__study_id__tags_post", Tag: tagTranscripts, Request: "TagRequest", Response: "Tag",
			Summary: "Add a tag to a study: a code researchers put on spans of transcripts, which analyses report and REFI-QDA exports carry", Method: "POST", Path: "/v1/api/studies/{study_id}/tags", Scope: "export:read", Write: true, Status: 201,
			Conflict: "tag_limit: the study has 200 tags."}, s.createTag),
		op(Operation{Name: "rename_tag", OperationID: "rename_tag_v1_api_studies__study_id__tags__tag_id__patch", Tag: tagTranscripts, Request: "TagRenameRequest", Response: "Tag",
			Summary: "Rename one of a study's tags", Method: "PATCH", Path: "/v1/api/studies/{study_id}/tags/{tag_id}", Scope: "export:read", Write: true}, s.renameTag),
		op(Operation{Name: "delete_tag", OperationID: "delete_tag_v1_api_studies__study_id__tags__tag_id__delete", Tag: tagTranscripts, Response: "TagDeleted",
			Summary: "Delete one of a study's tags and take it off every annotation (an annotation left with no tag and no note goes too)", Method: "DELETE", Path: "/v1/api/studies/{study_id}/tags/{tag_id}", Scope: "export:read", Write: true}, s.deleteTag),
		op(Operation{Name: "list_annotations", OperationID: "list_annotations_v1_api_interviews__interview_id__annotations_get", Tag: tagTranscripts, Response: "Annotation",
			Summary: "List an interview's annotations by message and position; text and notes redacted as in an export", Method: "GET", Path: "/v1/api/interviews/{interview_id}/annotations", Scope: "export:read"}, s.listAnnotations),
		op(Operation{Name: "create_annotation", OperationID: "create_annotation_v1_api_interviews__interview_id__annotations_post", Tag: tagTranscripts, Request: "AnnotationRequest", Response: "Annotation",
			Summary: "Annotate a span of a participant message with tags of the study and a note", Method: "POST", Path: "/v1/api/interviews/{interview_id}/annotations", Scope: "export:read", Write: true, Status: 201,
			Conflict: "annotation_limit: the interview has 500 annotations."}, s.createAnnotation),
		op(Operation{Name: "update_annotation", OperationID: "update_annotation_v1_api_interviews__interview_id__annotations__annotation_id__patch", Tag: tagTranscripts, Request: "AnnotationUpdateRequest", Response: "Annotation",
			Summary: "Change an annotation's tags or note (its span is fixed)", Method: "PATCH", Path: "/v1/api/interviews/{interview_id}/annotations/{annotation_id}", Scope: "export:read", Write: true}, s.updateAnnotation),
		op(Operation{Name: "delete_annotation", OperationID: "delete_annotation_v1_api_interviews__interview_id__annotations__annotation_id__delete", Tag: tagTranscripts, Response: "AnnotationDeleted",
			Summary: "Delete an annotation", Method: "DELETE", Path: "/v1/api/interviews/{interview_id}/annotations/{annotation_id}", Scope: "export:read", Write: true}, s.deleteAnnotation),
		op(Operation{Name: "search_transcripts", OperationID: "search_transcripts_v1_api_studies__study_id__transcripts_search_get", Tag: tagTranscripts, Response: "TranscriptHit",
			Summary: "Search a study's transcripts for words and \"quoted phrases\": the messages holding all of them, with a snippet (redacted as in an export) and the matches to highlight; a page reads a bounded number of messages, so it may hold fewer hits than its limit and still have a next page", Method: "GET", Path: "/v1/api/studies/{study_id}/transcripts/search", Scope: "export:read"}, s.searchTranscripts),
		op(Operation{Name: "create_participant_link", OperationID: "create_participant_link_v1_api_studies__study_id__participant_links_post", Tag: tagPublicAPI, Request: "ParticipantLinkRequest", Response: "ParticipantLinkOut",
			Summary: "Mint a participant link carrying context and a note for the interviewer", Method: "POST", Path: "/v1/api/studies/{study_id}/participant-links", Scope: "links:write", Write: true, Idempotent: true}, s.createParticipantLink),
		op(Operation{Name: "list_participant_links", OperationID: "list_participant_links_v1_api_studies__study_id__participant_links_get", Tag: tagRecruit, Response: "ParticipantLinkStatus",
			Summary: "List a study's participant links, newest first, each with its label, whether it is disabled, and what happened through it: browsers that opened it, interviews started and completed (rehearsals aside), last activity", Method: "GET", Path: "/v1/api/studies/{study_id}/participant-links", Scope: "links:read"}, s.listParticipantLinks),
		op(Operation{Name: "update_participant_link", OperationID: "update_participant_link_v1_api_studies__study_id__participant_links__link_id__patch", Tag: tagRecruit, Request: "ParticipantLinkUpdateRequest", Response: "ParticipantLinkStatus",
			Summary: "Label a participant link, or disable it (its page then says the study is closed; interviews under way continue) and enable it again", Method: "PATCH", Path: "/v1/api/studies/{study_id}/participant-links/{link_id}", Scope: "links:write", Write: true}, s.updateParticipantLink),
		op(Operation{Name: "create_participant_links", OperationID: "create_participant_links_v1_api_studies__study_id__participant_links_batch_post", Tag: tagRecruit, Request: "ParticipantLinksBatchRequest", Response: "ParticipantLinksBatchOut",
			Summary: "Create one person link per row of a CSV (label, context columns, note), all or none, and optionally mail each person their link through the server's SMTP server", Method: "POST", Path: "/v1/api/studies/{study_id}/participant-links/batch", Scope: "links:write", Write: true, Idempotent: true,
			Conflict: "mail_not_configured: send_email was asked for and the server has no SMTP server; nothing was created."}, s.createParticipantLinks),
		op(Operation{Name: "get_study_quota", OperationID: "get_study_quota_v1_api_studies__study_id__quota_get", Tag: tagRecruit, Response: "StudyQuotaOut",
			Summary: "Get a study's quota of completed interviews and how many it has", Method: "GET", Path: "/v1/api/studies/{study_id}/quota", Scope: "studies:read"}, s.getStudyQuota),
		op(Operation{Name: "set_study_quota", OperationID: "set_study_quota_v1_api_studies__study_id__quota_put", Tag: tagRecruit, Request: "StudyQuotaRequest", Response: "StudyQuotaOut",
			Summary: "Set a study's quota: once that many real interviews have completed the study pauses itself, and its invite pages say it has the interviews it needs; 0 removes it", Method: "PUT", Path: "/v1/api/studies/{study_id}/quota", Scope: "studies:write", Write: true}, s.setStudyQuota),
		op(Operation{Name: "list_interviews", OperationID: "list_interviews_v1_api_interviews_get", Tag: tagPublicAPI, Response: "PublicInterview",
			Summary: "List interviews (metadata only), newest first", Method: "GET", Path: "/v1/api/interviews", Scope: "export:read"}, s.listInterviews),
		op(Operation{Name: "get_interview", OperationID: "get_interview_v1_api_interviews__interview_id__get", Tag: tagPublicAPI, Response: "PublicInterview",
			Summary: "Get one interview's metadata", Method: "GET", Path: "/v1/api/interviews/{interview_id}", Scope: "export:read"}, s.getInterview),
		op(Operation{Name: "get_interview_link", OperationID: "get_study_interview_link_v1_api_studies__study_id__interview_link_get", Tag: tagPublicAPI, Response: "InterviewLinkOut",
			Summary: "Get the study's durable invite link", Method: "GET", Path: "/v1/api/studies/{study_id}/interview-link", Scope: "links:read"}, s.getInterviewLink),
		op(Operation{Name: "simulate_study", OperationID: "simulate_study_v1_api_studies__study_id__simulate_post", Tag: tagPublicAPI, Request: "SimulationRequest", Response: "SimulationJobAccepted",
			Summary: "Rehearse a study's interview with a synthetic participant (a background job)", Method: "POST", Path: "/v1/api/studies/{study_id}:simulate", Scope: "studies:write", Write: true, Status: 202, Idempotent: true,
			Job: kv.JobSimulation, Awaits: "get_simulation_status",
			Conflict: "study_live: the study's collection is live; no simulation starts.",
			Refusals: map[int]string{429: "rate_limited, or simulation_limit: the organisation already runs 3 simulations."}}, s.simulateStudy),
		op(Operation{Name: "get_simulation_status", OperationID: "get_simulation_status_v1_api_simulations__job_id__get", Tag: tagPublicAPI, Response: "SimulationStatusOut",
			Summary: "Poll a simulation: its status and the transcript so far", Method: "GET", Path: "/v1/api/simulations/{job_id}", Scope: "studies:read"}, s.getSimulationStatus),
	}
}
