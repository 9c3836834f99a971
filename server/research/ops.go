// Package research is the research operations, each written once: a method of Service
// that takes a principal and a typed input and returns a typed output or a coded error,
// and the table (OperationTable) that names each one's scope, class, route and wire
// names. REST, MCP, A2A and the web app run them through the research pipeline
// (server/pipeline); the OpenAPI document is built from the table. It is not a
// surface: it depends on the pipeline, and surfaces depend on it.
package research

import (
	"interviewd/kv"
	"interviewd/server/pipeline"
)

// Service is the research operations over the shared pipeline: the table's functions
// are its methods.
type Service struct {
	*pipeline.Core
	// StudyRenders keeps get_study answers by stored record (study_render.go).
	StudyRenders *studyRenders
}

// NewService makes the research operations over core.
func NewService(core *pipeline.Core) *Service {
	return &Service{Core: core, StudyRenders: NewStudyRenders()}
}

// OperationTable is the table of research operations. Every surface binds from it; adding
// an operation here is all it takes to expose it over REST, MCP and A2A and to document
// it in OpenAPI. OperationID, Request, Response and the tag Public API are the hosted
// service's published names (its operationIds, component schemas and tag), so
// generated clients match; the operations interviewd adds carry a tag of their own.
func (s *Service) OperationTable() []*pipeline.Operation {
	upload := pipeline.Op(pipeline.Operation{Name: "upload_file", OperationID: "upload_file_v1_api_files_post", Tag: pipeline.TagPublicAPI, Response: "FileUploadOut",
		Summary: "Upload a file whose text can inform authoring", Method: "POST", Path: "/v1/api/files", Scope: "studies:write", Write: true,
		Refusals: map[int]string{413: "payload_too_large: over 10 MB for .txt .md .csv, over 50 MB for other types."}}, s.uploadFile)

	upload.RESTBind = s.BindUpload
	download := pipeline.Op(pipeline.Operation{Name: "get_export_download", OperationID: "download_export_job_v1_api_exports__job_id__download_get", Tag: pipeline.TagPublicAPI,
		Summary: "Download a finished export: a signed URL valid 5 minutes (REST: the CSV inline unless Accept asks for JSON)", Method: "GET", Path: "/v1/api/exports/{job_id}/download", Scope: "export:read",
		Conflict: "export_not_ready: the export has not completed."}, s.getExportDownload)
	download.RESTRespond = s.respondDownload
	return []*pipeline.Operation{
		pipeline.Op(pipeline.Operation{Name: "whoami", OperationID: "whoami_v1_api_me_get", Tag: pipeline.TagPublicAPI, Response: "WhoAmIOut",
			Summary: "Describe the calling credential", Method: "GET", Path: "/v1/api/me"}, s.whoami),
		pipeline.Op(pipeline.Operation{Name: "list_studies", OperationID: "list_studies_v1_api_studies_get", Tag: pipeline.TagPublicAPI, Response: "PublicStudySummary",
			Summary: "List studies, newest created first", Method: "GET", Path: "/v1/api/studies", Scope: "studies:read"}, s.listStudies),
		pipeline.Op(pipeline.Operation{Name: "get_study", OperationID: "get_study_v1_api_studies__study_id__get", Tag: pipeline.TagPublicAPI, Response: "PublicStudyDetail",
			Summary: "Get a study with its current brief", Method: "GET", Path: "/v1/api/studies/{study_id}", Scope: "studies:read"}, s.getStudy),
		pipeline.Op(pipeline.Operation{Name: "create_study", OperationID: "create_study_v1_api_studies_post", Tag: pipeline.TagPublicAPI, Request: "StudyGuidanceRequest", Response: "AuthoringJobOut",
			Summary: "Author a new study from plain-language guidance (a background job)", Method: "POST", Path: "/v1/api/studies", Scope: "studies:write", Write: true, Status: 202, Idempotent: true,
			Job: kv.JobAuthoring, Awaits: "get_authoring_status"}, s.createStudy),
		pipeline.Op(pipeline.Operation{Name: "get_authoring_status", OperationID: "get_authoring_status_v1_api_studies_jobs__job_id__get", Tag: pipeline.TagPublicAPI, Response: "AuthoringStatusOut",
			Summary: "Poll an authoring job; a refused or failed job answers 200 with status failed", Method: "GET", Path: "/v1/api/studies/jobs/{job_id}", Scope: "studies:read",
			Conflict: "authoring_unconfirmed: the job completed without a failure, yet its study change cannot be confirmed."}, s.getAuthoringStatus),
		pipeline.Op(pipeline.Operation{Name: "refine_study", OperationID: "refine_study_v1_api_studies__study_id__refine_post", Tag: pipeline.TagPublicAPI, Request: "StudyGuidanceRequest", Response: "AuthoringJobOut",
			Summary: "Refine a study's design with plain-language guidance (a background job)", Method: "POST", Path: "/v1/api/studies/{study_id}:refine", Scope: "studies:write", Write: true, Status: 202, Idempotent: true,
			Job: kv.JobAuthoring, Awaits: "get_authoring_status"}, s.refineStudy),
		pipeline.Op(pipeline.Operation{Name: "update_study_brief", OperationID: "update_study_brief_v1_api_studies__study_id__brief_put", Tag: pipeline.TagStudies, Request: "StudyBriefRequest", Response: "PublicStudyDetail",
			Summary: "Replace a study's brief (title, objectives, screener and verbatim questions, duration) with one written directly: the next design version at once; interviews already started keep theirs", Method: "PUT", Path: "/v1/api/studies/{study_id}/brief", Scope: "studies:write", Write: true, Idempotent: true,
			Conflict: "study_closed: the study is closed; set its mode to test or live to edit its brief."}, s.updateStudyBrief),
		pipeline.Op(pipeline.Operation{Name: "get_participant_settings", OperationID: "get_participant_settings_v1_api_studies__study_id__participant_settings_get", Tag: pipeline.TagStudies, Response: "ParticipantSettingsOut",
			Summary: "Get what a study's participants see around the interview: consent, welcome and thank-you texts, completion code and redirect", Method: "GET", Path: "/v1/api/studies/{study_id}/participant-settings", Scope: "studies:read"}, s.getParticipantSettings),
		pipeline.Op(pipeline.Operation{Name: "update_participant_settings", OperationID: "update_participant_settings_v1_api_studies__study_id__participant_settings_put", Tag: pipeline.TagStudies, Request: "ParticipantSettingsRequest", Response: "ParticipantSettingsOut",
			Summary: "Replace a study's participant settings (a field left out returns to its default): a consent step before the interview, welcome and thank-you texts, a completion code and an https redirect for panels", Method: "PUT", Path: "/v1/api/studies/{study_id}/participant-settings", Scope: "studies:write", Write: true, Idempotent: true}, s.updateParticipantSettings),
		pipeline.Op(pipeline.Operation{Name: "set_study_mode", OperationID: "set_study_mode_v1_api_studies__study_id__mode_put", Tag: pipeline.TagPublicAPI, Request: "StudyModeRequest", Response: "StudyModeOut",
			Summary: "Set a study's mode: test, live (Go live), paused or closed", Method: "PUT", Path: "/v1/api/studies/{study_id}/mode", Write: true, ScopeFor: modeScope, ScopeDoc: "studies:write; studies:golive to go live",
			AnyScope: []string{"studies:write", "studies:golive"}}, s.setStudyMode),
		upload,
		pipeline.Op(pipeline.Operation{Name: "start_export", OperationID: "start_export_v1_api_exports_post", Tag: pipeline.TagPublicAPI, Request: "ExportRequest", Response: "ExportJobAccepted",
			Summary: "Export a study's completed live interviews, redacted, or its analysis as a report or a REFI-QDA project (a background job)", Method: "POST", Path: "/v1/api/exports", Scope: "export:read", Write: true, Status: 202, Idempotent: true,
			Job: kv.JobExport, Awaits: "get_export_status",
			Conflict: "analysis_not_ready: an analysis format was asked for and the study has no completed analysis; study_not_live: the study has never been live (Test mode: no analysis).",
			Refusals: map[int]string{403: "insufficient_scope, or test_environment: test-environment credentials cannot export.", 404: "not_found, or analysis_not_found: no such study, or no such analysis_version."}}, s.startExport),
		pipeline.Op(pipeline.Operation{Name: "get_export_status", OperationID: "get_export_job_v1_api_exports__job_id__get", Tag: pipeline.TagPublicAPI, Response: "ExportJobStatus",
			Summary: "Poll an export", Method: "GET", Path: "/v1/api/exports/{job_id}", Scope: "export:read"}, s.getExportStatus),
		download,
		pipeline.Op(pipeline.Operation{Name: "start_analysis", OperationID: "start_analysis_v1_api_studies__study_id__analysis_post", Tag: pipeline.TagAnalysis, Response: "AnalysisJobAccepted",
			Summary: "Analyse a live study's completed interviews into findings (a background job); a study's analysis already queued or running is returned instead of a second", Method: "POST", Path: "/v1/api/studies/{study_id}/analysis", Scope: "export:read", Write: true, Status: 202, Idempotent: true,
			Job: kv.JobAnalysis, Awaits: "get_analysis_status",
			Conflict: "study_not_live: the study has never been live (Test mode: no analysis).",
			Refusals: map[int]string{403: "insufficient_scope, or test_environment: test-environment credentials cannot analyse.", 429: "rate_limited, or analysis_limit: the organisation already runs 3 analyses."}}, s.startAnalysis),
		pipeline.Op(pipeline.Operation{Name: "get_analysis_status", OperationID: "get_analysis_status_v1_api_analyses__job_id__get", Tag: pipeline.TagAnalysis, Response: "AnalysisJobStatus",
			Summary: "Poll an analysis job: its status, the version it stored or why it failed", Method: "GET", Path: "/v1/api/analyses/{job_id}", Scope: "export:read"}, s.getAnalysisStatus),
		pipeline.Op(pipeline.Operation{Name: "get_analysis", OperationID: "get_analysis_v1_api_studies__study_id__analysis_get", Tag: pipeline.TagAnalysis, Response: "StudyAnalysis",
			Summary: "Get a study's latest completed analysis, or a given version: findings per objective with quotes for and against, themes, answers per question, suggestions", Method: "GET", Path: "/v1/api/studies/{study_id}/analysis", Scope: "export:read",
			Conflict: "study_not_live: the study has never been live (Test mode: no analysis).",
			Refusals: map[int]string{403: "insufficient_scope, or test_environment: test-environment credentials have no analysis.", 404: "not_found, or analysis_not_found: no completed analysis (or no such version) yet."}}, s.getAnalysis),
		pipeline.Op(pipeline.Operation{Name: "list_tags", OperationID: "list_tags_v1_api_studies__study_id__tags_get", Tag: pipeline.TagTranscripts, Response: "Tag",
			Summary: "List a study's tags (its codes for annotating transcripts), oldest first", Method: "GET", Path: "/v1/api/studies/{study_id}/tags", Scope: "export:read"}, s.listTags),
		pipeline.Op(pipeline.Operation{Name: "create_tag", OperationID: "create_tag_v1_api_studies__study_id__tags_post", Tag: pipeline.TagTranscripts, Request: "TagRequest", Response: "Tag",
			Summary: "Add a tag to a study: a code researchers put on spans of transcripts, which analyses report and REFI-QDA exports carry", Method: "POST", Path: "/v1/api/studies/{study_id}/tags", Scope: "export:read", Write: true, Status: 201,
			Conflict: "tag_limit: the study has 200 tags."}, s.createTag),
		pipeline.Op(pipeline.Operation{Name: "rename_tag", OperationID: "rename_tag_v1_api_studies__study_id__tags__tag_id__patch", Tag: pipeline.TagTranscripts, Request: "TagRenameRequest", Response: "Tag",
			Summary: "Rename one of a study's tags", Method: "PATCH", Path: "/v1/api/studies/{study_id}/tags/{tag_id}", Scope: "export:read", Write: true}, s.renameTag),
		pipeline.Op(pipeline.Operation{Name: "delete_tag", OperationID: "delete_tag_v1_api_studies__study_id__tags__tag_id__delete", Tag: pipeline.TagTranscripts, Response: "TagDeleted",
			Summary: "Delete one of a study's tags and take it off every annotation (an annotation left with no tag and no note goes too)", Method: "DELETE", Path: "/v1/api/studies/{study_id}/tags/{tag_id}", Scope: "export:read", Write: true}, s.deleteTag),
		pipeline.Op(pipeline.Operation{Name: "list_annotations", OperationID: "list_annotations_v1_api_interviews__interview_id__annotations_get", Tag: pipeline.TagTranscripts, Response: "Annotation",
			Summary: "List an interview's annotations by message and position; text and notes redacted as in an export", Method: "GET", Path: "/v1/api/interviews/{interview_id}/annotations", Scope: "export:read"}, s.listAnnotations),
		pipeline.Op(pipeline.Operation{Name: "create_annotation", OperationID: "create_annotation_v1_api_interviews__interview_id__annotations_post", Tag: pipeline.TagTranscripts, Request: "AnnotationRequest", Response: "Annotation",
			Summary: "Annotate a span of a participant message with tags of the study and a note", Method: "POST", Path: "/v1/api/interviews/{interview_id}/annotations", Scope: "export:read", Write: true, Status: 201,
			Conflict: "annotation_limit: the interview has 500 annotations."}, s.createAnnotation),
		pipeline.Op(pipeline.Operation{Name: "update_annotation", OperationID: "update_annotation_v1_api_interviews__interview_id__annotations__annotation_id__patch", Tag: pipeline.TagTranscripts, Request: "AnnotationUpdateRequest", Response: "Annotation",
			Summary: "Change an annotation's tags or note (its span is fixed)", Method: "PATCH", Path: "/v1/api/interviews/{interview_id}/annotations/{annotation_id}", Scope: "export:read", Write: true}, s.updateAnnotation),
		pipeline.Op(pipeline.Operation{Name: "delete_annotation", OperationID: "delete_annotation_v1_api_interviews__interview_id__annotations__annotation_id__delete", Tag: pipeline.TagTranscripts, Response: "AnnotationDeleted",
			Summary: "Delete an annotation", Method: "DELETE", Path: "/v1/api/interviews/{interview_id}/annotations/{annotation_id}", Scope: "export:read", Write: true}, s.deleteAnnotation),
		pipeline.Op(pipeline.Operation{Name: "search_transcripts", OperationID: "search_transcripts_v1_api_studies__study_id__transcripts_search_get", Tag: pipeline.TagTranscripts, Response: "TranscriptHit",
			Summary: "Search a study's transcripts for words and \"quoted phrases\": the messages holding all of them, with a snippet (redacted as in an export) and the matches to highlight; a page reads a bounded number of messages, so it may hold fewer hits than its limit and still have a next page", Method: "GET", Path: "/v1/api/studies/{study_id}/transcripts/search", Scope: "export:read"}, s.searchTranscripts),
		pipeline.Op(pipeline.Operation{Name: "create_participant_link", OperationID: "create_participant_link_v1_api_studies__study_id__participant_links_post", Tag: pipeline.TagPublicAPI, Request: "ParticipantLinkRequest", Response: "ParticipantLinkOut",
			Summary: "Mint a participant link carrying context and a note for the interviewer", Method: "POST", Path: "/v1/api/studies/{study_id}/participant-links", Scope: "links:write", Write: true, Idempotent: true}, s.createParticipantLink),
		pipeline.Op(pipeline.Operation{Name: "list_participant_links", OperationID: "list_participant_links_v1_api_studies__study_id__participant_links_get", Tag: pipeline.TagRecruit, Response: "ParticipantLinkStatus",
			Summary: "List a study's participant links, newest first, each with its label, whether it is disabled, and what happened through it: browsers that opened it, interviews started and completed (rehearsals aside), last activity", Method: "GET", Path: "/v1/api/studies/{study_id}/participant-links", Scope: "links:read"}, s.listParticipantLinks),
		pipeline.Op(pipeline.Operation{Name: "update_participant_link", OperationID: "update_participant_link_v1_api_studies__study_id__participant_links__link_id__patch", Tag: pipeline.TagRecruit, Request: "ParticipantLinkUpdateRequest", Response: "ParticipantLinkStatus",
			Summary: "Label a participant link, or disable it (its page then says the study is closed; interviews under way continue) and enable it again", Method: "PATCH", Path: "/v1/api/studies/{study_id}/participant-links/{link_id}", Scope: "links:write", Write: true}, s.updateParticipantLink),
		pipeline.Op(pipeline.Operation{Name: "create_participant_links", OperationID: "create_participant_links_v1_api_studies__study_id__participant_links_batch_post", Tag: pipeline.TagRecruit, Request: "ParticipantLinksBatchRequest", Response: "ParticipantLinksBatchOut",
			Summary: "Create one person link per row of a CSV (label, context columns, note), all or none, and optionally mail each person their link through the server's SMTP server", Method: "POST", Path: "/v1/api/studies/{study_id}/participant-links/batch", Scope: "links:write", Write: true, Idempotent: true,
			Conflict: "mail_not_configured: send_email was asked for and the server has no SMTP server; nothing was created."}, s.createParticipantLinks),
		pipeline.Op(pipeline.Operation{Name: "get_study_quota", OperationID: "get_study_quota_v1_api_studies__study_id__quota_get", Tag: pipeline.TagRecruit, Response: "StudyQuotaOut",
			Summary: "Get a study's quota of completed interviews and how many it has", Method: "GET", Path: "/v1/api/studies/{study_id}/quota", Scope: "studies:read"}, s.getStudyQuota),
		pipeline.Op(pipeline.Operation{Name: "set_study_quota", OperationID: "set_study_quota_v1_api_studies__study_id__quota_put", Tag: pipeline.TagRecruit, Request: "StudyQuotaRequest", Response: "StudyQuotaOut",
			Summary: "Set a study's quota: once that many real interviews have completed the study pauses itself, and its invite pages say it has the interviews it needs; 0 removes it", Method: "PUT", Path: "/v1/api/studies/{study_id}/quota", Scope: "studies:write", Write: true}, s.setStudyQuota),
		pipeline.Op(pipeline.Operation{Name: "list_interviews", OperationID: "list_interviews_v1_api_interviews_get", Tag: pipeline.TagPublicAPI, Response: "PublicInterview",
			Summary: "List interviews (metadata only), newest first", Method: "GET", Path: "/v1/api/interviews", Scope: "export:read"}, s.listInterviews),
		pipeline.Op(pipeline.Operation{Name: "get_interview", OperationID: "get_interview_v1_api_interviews__interview_id__get", Tag: pipeline.TagPublicAPI, Response: "PublicInterview",
			Summary: "Get one interview's metadata", Method: "GET", Path: "/v1/api/interviews/{interview_id}", Scope: "export:read"}, s.getInterview),
		pipeline.Op(pipeline.Operation{Name: "get_interview_link", OperationID: "get_study_interview_link_v1_api_studies__study_id__interview_link_get", Tag: pipeline.TagPublicAPI, Response: "InterviewLinkOut",
			Summary: "Get the study's durable invite link", Method: "GET", Path: "/v1/api/studies/{study_id}/interview-link", Scope: "links:read"}, s.getInterviewLink),
		pipeline.Op(pipeline.Operation{Name: "simulate_study", OperationID: "simulate_study_v1_api_studies__study_id__simulate_post", Tag: pipeline.TagPublicAPI, Request: "SimulationRequest", Response: "SimulationJobAccepted",
			Summary: "Rehearse a study's interview with a synthetic participant (a background job)", Method: "POST", Path: "/v1/api/studies/{study_id}:simulate", Scope: "studies:write", Write: true, Status: 202, Idempotent: true,
			Job: kv.JobSimulation, Awaits: "get_simulation_status",
			Conflict: "study_live: the study's collection is live; no simulation starts.",
			Refusals: map[int]string{429: "rate_limited, or simulation_limit: the organisation already runs 3 simulations."}}, s.simulateStudy),
		pipeline.Op(pipeline.Operation{Name: "get_simulation_status", OperationID: "get_simulation_status_v1_api_simulations__job_id__get", Tag: pipeline.TagPublicAPI, Response: "SimulationStatusOut",
			Summary: "Poll a simulation: its status and the transcript so far", Method: "GET", Path: "/v1/api/simulations/{job_id}", Scope: "studies:read"}, s.getSimulationStatus),
	}
}
