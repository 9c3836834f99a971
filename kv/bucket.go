package kv

// Bucket names. Every bucket is created in one transaction at Open.
var (
	bucketMeta        = []byte("meta")        // schema version and instance secrets
	bucketOrgs        = []byte("orgs")        // org id → Org
	bucketUsers       = []byte("users")       // user id → User
	bucketUserEmails  = []byte("user_emails") // lower-cased email → user id
	bucketMembers     = []byte("members")     // org id + user id → Membership
	bucketKeys        = []byte("keys")        // key id → Key
	bucketKeyHashes   = []byte("key_hashes")  // SHA-256(secret) → key id
	bucketStudies     = []byte("studies")     // partition + study id → Study
	bucketStudyIndex  = []byte("study_index") // partition + study id → compact list row
	bucketBriefs      = []byte("briefs")      // partition + study id + version → BriefVersion
	bucketLinks       = []byte("links")       // token → Link
	bucketIdempotency = []byte("idempotency") // partition + key → idempotency record
	bucketJobs        = []byte("jobs")        // job id → Job
	bucketFiles       = []byte("files")       // partition + file id → File
	bucketInterviews  = []byte("interviews")  // partition + interview id → Interview
	bucketPlugins     = []byte("plugins")     // org id + kind + name → OrgPlugin
	bucketSessions    = []byte("sessions")    // link+session or interview+session → interview id
	bucketTranscripts = []byte("transcripts") // interview id + 4-byte sequence → Message

	// People: the web app's users, their sign-in and their sessions.
	bucketUserOrgs       = []byte("user_orgs")          // user id + org id → nil (a user's memberships)
	bucketTwoStep        = []byte("two_step")           // user id → twoStepRecord (secrets, hashed codes)
	bucketInvitations    = []byte("invitations")        // org id + invitation id → Invitation
	bucketInviteHashes   = []byte("invitation_hashes")  // SHA-256(token) → org id + invitation id
	bucketSignInCodes    = []byte("signin_codes")       // HMAC(email) → signInRecord
	bucketAppSessions    = []byte("app_sessions")       // session id → Session
	bucketAppSessionHash = []byte("app_session_hashes") // SHA-256(token) → session id
	bucketUserSessions   = []byte("user_sessions")      // user id + session id → nil
	bucketOutbox         = []byte("mail_outbox")        // UUIDv7 → OutboxMail (offline mail, newest kept)
	bucketAccess         = []byte("access")             // transaction id → accessRecord (account access API)

	bucketAgentTasks = []byte("agent_tasks") // partition + task id (UUIDv7) → AgentTask (A2A)

	// Analyses: each study's versions of findings, and the one analysis job a study may
	// have queued or running (analysis.go).
	bucketAnalyses     = []byte("analyses")      // partition + study id + 4-byte version → AnalysisVersion
	bucketAnalysisOpen = []byte("analysis_open") // partition + study id → job id of its queued or running analysis
	// The one request a study may have for an analysis after a completed live interview
	// (analysis_wanted.go): kept so that a restart during the delay does not lose it.
	bucketAnalysisWanted = []byte("analysis_wanted") // partition + study id → AnalysisWanted

	// A study's tags and the annotations of its interviews' transcripts (annotation.go).
	bucketTags        = []byte("annotation_tags") // partition + study id + tag id → Tag
	bucketAnnotations = []byte("annotations")     // partition + study id + interview id + annotation id → Annotation

	// How many browsers opened each study's invite pages (link_opens.go).
	bucketLinkOpens = []byte("link_opens") // partition + study id → linkOpens
	// Each link's counts, and each study's quota of completed interviews (link_status.go,
	// study_quota.go).
	bucketLinkStats  = []byte("link_stats")  // token → LinkStats
	bucketStudyQuota = []byte("study_quota") // partition + study id → StudyQuota

	// OAuth: registered clients, connections (approvals) and the hashes of their codes
	// and tokens (oauth_client.go, oauth_grant.go).
	bucketOAuthClients     = []byte("oauth_clients")     // client id → OAuthClient
	bucketOAuthConnections = []byte("oauth_connections") // org id + connection id (UUIDv7) → Connection
	bucketOAuthTokens      = []byte("oauth_tokens")      // SHA-256(code or token) → tokenRecord
	bucketOAuthConnTokens  = []byte("oauth_conn_tokens") // connection id + SHA-256 → nil (a connection's codes and tokens)

	// Credits and roles: each organisation's credit history, its pending low-credit
	// mail, and who changed whose role when (credit_ledger.go, role_change.go).
	bucketCreditLedger = []byte("credit_ledger") // org id + entry id (UUIDv7) → CreditEntry
	bucketCreditAlerts = []byte("credit_alerts") // org id → creditAlert
	bucketRoleChanges  = []byte("role_changes")  // org id + change id (UUIDv7) → RoleChange
	// Each organisation's logo for its participant pages (org_brand.go).
	bucketOrgLogos = []byte("org_logos") // org id → Logo
)

var allBuckets = [][]byte{
	bucketMeta, bucketOrgs, bucketUsers, bucketUserEmails, bucketMembers, bucketKeys,
	bucketKeyHashes, bucketStudies, bucketStudyIndex, bucketBriefs, bucketLinks, bucketIdempotency,
	bucketJobs, bucketFiles, bucketInterviews, bucketTranscripts, bucketSessions, bucketPlugins,
	bucketUserOrgs, bucketTwoStep, bucketInvitations, bucketInviteHashes, bucketSignInCodes,
	bucketAppSessions, bucketAppSessionHash, bucketUserSessions, bucketOutbox, bucketAccess,
	bucketAgentTasks, bucketAnalyses, bucketAnalysisOpen, bucketAnalysisWanted, bucketLinkOpens,
	bucketLinkStats, bucketStudyQuota,
	bucketTags, bucketAnnotations,
	bucketOAuthClients, bucketOAuthConnections, bucketOAuthTokens, bucketOAuthConnTokens,
	bucketCreditLedger, bucketCreditAlerts, bucketRoleChanges,
	bucketOrgLogos,
}
