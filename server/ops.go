package server

import "interviewd/kv"

// operations is the table of research operations. Every surface binds from it; adding
// an operation here is all it takes to expose it over REST, MCP and A2A and to document
// it in OpenAPI. OperationID, Request, Response and the tag Public API are the hosted
// service's published names (its operationIds, component schemas and tag), so
// generated clients match; the operations interviewd adds carry a tag of their own.
func (s *Server) operations() []*Operation {
	upload := op(Operation{Name: "upload_file", OperationID: "upload_file_v1_api_files_post", Tag: tagPublicAPI, Response: "FileUploadOut",
		Summary: "Upload a file whose text can inform authoring", Method: "POST", Path: "/v1/api/files", Scope: "studies:write", Write: true,
		Refusals: map[int]string{413: "payload_too_large: over 10 MB for .txt .md .csv, over 50 MB for other types."}}, s.uploadFile)
	upload.restBind = s.bindUpload
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
		op(Operation{Name: "create_participant_link", OperationID: "create_participant_link_v1_api_studies__study_id__participant_links_post", Tag: tagPublicAPI, Request: "ParticipantLinkRequest", Response: "ParticipantLinkOut",
			Summary: "Mint a participant link carrying context and a note for the interviewer", Method: "POST", Path: "/v1/api/studies/{study_id}/participant-links", Scope: "links:write", Write: true, Idempotent: true}, s.createParticipantLink),
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
