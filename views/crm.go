package views

// CRMCardView is the Stages page's CRM connections card, for editors and
// owners: one line per connection and what can be added.
type CRMCardView struct {
	Items []CRMConnectionItem
	// Kinds are the kinds a connection can be added of (value: kind,
	// label: its title).
	Kinds []Option
	// Full: the account has the most connections it may have (Max).
	Full bool
	Max  int
}

// CRMConnectionItem is one connection on the card's line.
type CRMConnectionItem struct {
	ID   int64
	Kind string
	// KindTitle is the kind as people write it: HubSpot.
	KindTitle string
	Name      string
	// Last is when its last delivery came; zero Stamp when none has.
	Last Stamp
	// Waiting and GaveUp count its deliveries in words ("2 waiting"); ""
	// for none.
	Waiting string
	GaveUp  string
}

// CRMForm is a connection's new or edit form as typed, with its problems.
// Secrets are never put back into it: their fields say only whether one is
// saved.
type CRMForm struct {
	// ID is 0 for a new connection.
	ID        int64
	Kind      string
	KindTitle string
	Name      Field
	Secret    Field
	APIToken  Field
	// LeadIDProperty is HubSpot's contact property, or Pipedrive's person
	// field key, that holds Meta's lead id.
	LeadIDProperty Field
	// Fields are the generic mapping's rows, one per target.
	Fields []Field
	// FieldsError is a problem of the mapping as a whole.
	FieldsError string
	// Error is a problem of the whole form (too many connections).
	Error string
	// HookURL is the connection's URL; for a new one, its start (the
	// token is made when it is saved). Guessed: it was made with the
	// browser's address, as no public address is set.
	HookURL string
	Guessed bool
}

// CRMPage is one connection's page: its hook URL and how to set it up, its
// stage table, its latest deliveries.
type CRMPage struct {
	ID        int64
	Kind      string
	KindTitle string
	Name      string
	// HookURL is absolute: made with the public address, or while none
	// is set with the address the browser uses, which Guessed says.
	HookURL string
	Guessed bool
	// NewSecret is a generated secret, shown once right after the
	// connection was created.
	NewSecret string
	// Secret says how the secret is held: "saved", "from $ENV (setup
	// file)", "not set"; APIToken likewise.
	Secret   string
	APIToken string
	// SampleBody and Curl show a generic connection's sender what to post.
	SampleBody string
	Curl       string
	Stages     CRMStageTable
	Deliveries []CRMDeliveryRow
	// Before is the delivery id the list is older than (0: the newest);
	// More is the id to load the next page before, 0 when there is none.
	Before int64
	More   int64
	// SignIns warns of deliveries that failed authentication in the last
	// hour; "" when none did.
	SignIns string
}

// CRMStageTable is a connection's stage table with the account's stages to
// map each to.
type CRMStageTable struct {
	Rows []CRMStageRow
	// Stages are the account's stage names, the select's choices.
	Stages []string
	// CanLoad: the kind lists its stages through its API.
	CanLoad bool
	// AddID and AddStage are a generic connection's row to add by hand,
	// as typed.
	AddID    Field
	AddStage string
	// Error is a problem of the table as saved, shown above it.
	Error string
}

// CRMStageRow is one CRM stage id and the account's stage it means.
type CRMStageRow struct {
	ID       string
	Label    string
	Pipeline string
	// Stage is the account's stage; "" while unmapped. Missing: Stage is
	// no longer in the account's list.
	Stage   string
	Missing bool
	// Seen is when a delivery last carried the id; Waits marks an unmapped
	// id deliveries carried, whose changes wait for its mapping.
	Seen  Stamp
	Waits bool
}

// CRMDeliveryRow is one delivery on one line: when, which stage, what
// became of it, and its body as received.
type CRMDeliveryRow struct {
	ID       int64
	Received Stamp
	StageID  string
	// StageLabel is the CRM's label of StageID, when the table knows it.
	StageLabel string
	Occurred   Stamp
	// Outcome says what became of it in words; Badge is its class (ok,
	// warn, bad, muted).
	Outcome string
	Badge   string
	// LeadURL links the lead it was recorded for; "" when none.
	LeadURL string
	// Body is its body as readable JSON, its first 2 KB when WholeBody
	// links the whole.
	Body      string
	WholeBody string
}

// crmStageChoices are a stage table row's choices when it is mapped to
// current: not mapped, the account's stages, and current when the list no
// longer has it.
func crmStageChoices(stages []string, current string) []Option {
	out := []Option{{Value: "", Label: "— not mapped —"}}
	found := current == ""
	for _, s := range stages {
		out = append(out, Option{Value: s, Label: s})
		if s == current {
			found = true
		}
	}
	if !found {
		out = append(out, Option{Value: current, Label: current + " (not in the list)"})
	}
	return out
}

// senderName is who posts a connection's deliveries, as a sentence names
// it: the CRM, or "your system" for a generic webhook.
func senderName(kind, title string) string {
	if kind == "generic" {
		return "your system"
	}
	return title
}
