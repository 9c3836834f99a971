package webui

// The recruitment page: a study's participant links with what happened through each,
// disabling and enabling them, a CSV of people turned into person links (optionally
// mailed), the links downloaded back with their URLs, and the study's quota.

const (
	PageStudyLinks = "app_study_links"
	TabLinks       = "links"
)

// LinksPage is a study's recruitment page.
type LinksPage struct {
	Tabs  StudyTabs
	ID    string
	Name  string
	Mode  string
	Links []LinkStatusRow
	// Totals over every link.
	Opened, Started, Completed int

	CanLinks bool // may create, label, disable and enable links (links:write)
	CanQuota bool // may set the quota (studies:write)

	Quota        int // 0: none
	QuotaDone    int // completed real interviews counted against it
	QuotaReached bool
	ReachedAt    *Stamp

	// MailReady is set when the server has an SMTP server: links can be mailed. When
	// it has none, the page says so instead of offering to.
	MailReady  bool
	CSV        string // the pasted CSV, kept on a refusal
	SendEmail  bool
	SenderName string
	Problems   []string // a refused CSV's problems, each naming its row and column
	Errors     FieldErrors
	Notice     string
}

// LinkStatusRow is one participant link on the recruitment page.
type LinkStatusRow struct {
	ID         string
	Label      string
	URL        string
	Audience   string
	Status     string // unopened, opened, started, completed
	StatusText string // the status in words
	Disabled   bool
	Opened     int
	Started    int
	Completed  int
	Last       *Stamp
	Created    Stamp
	Context    []KeyValue
}

// StatusWords says a link's status as the page shows it.
func StatusWords(status string, disabled bool) string {
	words := map[string]string{"unopened": "Not opened", "opened": "Opened", "started": "Started", "completed": "Completed"}[status]
	if disabled {
		return "Disabled · " + words
	}
	return words
}
