// Package models holds the gorm structs that map leadsignal's tables and the
// typed constants of their status columns. It imports nothing of ours and
// makes no database calls: the store package owns every query.
package models

import "time"

// User is a person who logs in to the web UI.
type User struct {
	ID           int64
	Email        string
	PasswordHash string
	IsAdmin      bool
	// LastAccountID is the account the user looked at last, so the switcher
	// can bring them back to it after the next login.
	LastAccountID *int64
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Session is a browser's session, kept server-side so that it can be ended
// on every replica at once. IDHash is the SHA-256 (hex) of the random id the
// cookie carries; Data holds the session's values, encoded by the web layer.
type Session struct {
	IDHash string `gorm:"primaryKey"`
	// UserID is the logged-in user; nil before a login.
	UserID     *int64
	Data       []byte
	CreatedAt  time.Time
	LastSeenAt time.Time
}

// Account is one client workspace: its leads, rules, datasets and members
// are invisible from every other account.
type Account struct {
	ID             int64
	Slug           string
	Name           string
	Timezone       string
	DefaultCountry string
	Currency       string
	CRMName        string `gorm:"column:crm_name"`
	// WebsiteURL is the event_source_url of the account's website leads
	// posted without one; "" when the account has none.
	WebsiteURL string `gorm:"column:website_url"`
	// JunkSettings is the JSON of junk.Settings; "{}" means the defaults.
	JunkSettings string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Role is what a member may do inside an account (docs/operations.md,
// "Roles"): each role can do everything the roles below it can.
type Role string

// Roles, from most to least powerful.
const (
	// RoleOwner does everything, members too.
	RoleOwner Role = "owner"
	// RoleEditor sets the account up: datasets, rules, stages,
	// connections, uploads, settings.
	RoleEditor Role = "editor"
	// RoleSales reads everything an editor reads and marks stages on the
	// lead page.
	RoleSales Role = "sales"
	// RoleViewer reads the Overview and the leads and changes nothing.
	RoleViewer Role = "viewer"
)

// Roles lists every role in order of power, for forms and validation.
var Roles = []Role{RoleOwner, RoleEditor, RoleSales, RoleViewer}

// Valid reports whether r is one of the defined roles.
func (r Role) Valid() bool { return r.rank() > 0 }

// rank orders roles so that a higher rank can do everything a lower one can.
func (r Role) rank() int {
	switch r {
	case RoleOwner:
		return 4
	case RoleEditor:
		return 3
	case RoleSales:
		return 2
	case RoleViewer:
		return 1
	}
	return 0
}

// AtLeast reports whether r grants everything min grants.
func (r Role) AtLeast(min Role) bool { return r.rank() >= min.rank() && min.rank() > 0 }

// DownloadsContacts reports whether r may download leads' raw contact
// data (emails, phones, names, addresses, messages) in a CSV: owners and
// editors only. Everyone else's downloads leave those columns out.
func (r Role) DownloadsContacts() bool { return r.AtLeast(RoleEditor) }

// Membership gives a user a role in an account.
type Membership struct {
	AccountID int64 `gorm:"primaryKey;autoIncrement:false"`
	UserID    int64 `gorm:"primaryKey;autoIncrement:false"`
	Role      Role
	CreatedAt time.Time
}

// Member is a membership joined with its user, for the members list.
type Member struct {
	UserID    int64
	Email     string
	Role      Role
	CreatedAt time.Time
}

// AccountAccess is an account as one user sees it: with their role in it.
type AccountAccess struct {
	Account
	Role Role
}

// IngestKey lets a website or CRM post leads to one account. Only the
// SHA-256 of the secret is stored; the secret is shown once at creation.
type IngestKey struct {
	ID         int64
	AccountID  int64
	Name       string
	Prefix     string // the first characters of the secret, to tell keys apart
	KeyHash    string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

// Source says where a lead came from; it decides its events' action_source.
type Source string

// Lead sources accepted by the ingest API.
const (
	SourceWebsite     Source = "website"
	SourceInstantForm Source = "instant_form"
	SourceCRM         Source = "crm"
	SourceWhatsApp    Source = "whatsapp"
	SourcePhone       Source = "phone"
)

// Sources lists every source, for validation and filters.
var Sources = []Source{SourceWebsite, SourceInstantForm, SourceCRM, SourceWhatsApp, SourcePhone}

// Valid reports whether s is a known source.
func (s Source) Valid() bool {
	for _, v := range Sources {
		if s == v {
			return true
		}
	}
	return false
}

// Lead is one form fill or CRM contact with its raw fields, its normalised
// match keys (MatchKeys, JSON of normalize.Keys) and its junk verdict.
type Lead struct {
	ID         int64
	AccountID  int64
	ExternalID *string
	Source     Source
	Partial    bool
	Email      string
	Phone      string
	// PhoneE164 is the normalised phone, digits only, for search.
	PhoneE164 string `gorm:"column:phone_e164"`
	// PhoneCountry is the phone's region as capture parsed it ("US"); ""
	// when it did not parse.
	PhoneCountry    string
	FirstName       string
	LastName        string
	City            string
	State           string
	Zip             string
	Country         string
	Gender          string
	DateOfBirth     string
	Message         string
	FBCLID          string `gorm:"column:fbclid"`
	FBC             string `gorm:"column:fbc"`
	FBP             string `gorm:"column:fbp"`
	ClientIP        string `gorm:"column:client_ip_address"`
	ClientUserAgent string
	EventSourceURL  string `gorm:"column:event_source_url"`
	FillSeconds     *float64
	Honeypot        string
	MetaLeadID      string
	// Fields holds the custom form fields as a JSON object of strings.
	Fields string
	// MatchKeys holds the normalised and hashed keys as JSON.
	MatchKeys string
	EmailHash string
	PhoneHash string
	// Junk is the verdict in force: the signals' unless a person overrode it.
	Junk bool
	// JunkReasons is the JSON list of signals that fired at capture.
	JunkReasons string
	// JunkOverride is "junk" or "not_junk" once a person decided, else "".
	JunkOverride string
	// Stage is the lead's latest CRM stage, "" until one is recorded.
	Stage string
	// Test marks a test lead, which "Send a test lead" on the site snippet
	// section captured: its events are decided and never go to Meta
	// (ReasonTestLead). No API sets it.
	Test bool
	// CreatedAt is the capture time: the form's, or when we received it.
	CreatedAt  time.Time
	ReceivedAt time.Time
	UpdatedAt  time.Time
}

// StageChange is one dated step of a lead: a CRM stage, or a person
// marking it junk or not junk.
type StageChange struct {
	ID         int64
	AccountID  int64
	LeadID     int64
	Stage      string
	Value      *float64
	Currency   string
	OccurredAt time.Time
	// ChangeID is the caller's key for this change, so a repeated CRM sync
	// records it once.
	ChangeID *string
	// UserID is the person who made the change in the UI; nil for the API.
	UserID *int64
	// Source is the CRM a connection's change came from ("HubSpot"); ""
	// for a person's or the stage API's. Its events send it as
	// lead_event_source when the account names no CRM.
	Source string
	// Via is the way in the change came by (ViaAPI, ViaUpload, ViaCRM,
	// ViaPerson, ViaDemo); "" for one recorded before it was kept.
	Via string
	// ViaID is what it came by: the ingest key (ViaAPI), the stage upload
	// (ViaUpload) or the CRM delivery (ViaCRM).
	ViaID *int64
	// ViaRow is the upload's row, numbered as a spreadsheet numbers it.
	ViaRow    *int
	CreatedAt time.Time
}

// The ways a stage change comes in (StageChange.Via).
const (
	ViaAPI    = "api"
	ViaUpload = "upload"
	ViaCRM    = "crm"
	ViaPerson = "person"
	ViaDemo   = "demo"
)

// Stages a person can set on the lead page, and the junk markers.
const (
	StageQualified = "qualified"
	StageBooked    = "booked"
	StageWon       = "won"
	StageJunk      = "junk"
	StageNotJunk   = "not_junk"
)

// Mode is how a dataset sends: for real, to Meta's Test Events tool, or
// not at all (the payload is built and logged).
type Mode string

// Dataset modes.
const (
	ModeLive   Mode = "live"
	ModeTest   Mode = "test"
	ModeDryRun Mode = "dry_run"
)

// LDU is a dataset's Limited Data Use setting.
type LDU string

// Limited Data Use settings.
const (
	LDUOff        LDU = "off"
	LDUCalifornia LDU = "california"
	LDUAlways     LDU = "always"
)

// Dataset is a Meta dataset (pixel) that an account sends events to.
// Secrets are sealed (internal/seal); only the token's last four
// characters are ever shown.
//
// A dataset is a destination of the account's events (docs/destinations.md):
// Kind says whose, Meta's dataset or TikTok's, Google's or Pinterest's
// account. PixelID is the platform's id of where events go, TokenSealed its
// token (Google's OAuth refresh token) and AppSecretSealed Meta's app secret
// or Google's OAuth client secret.
type Dataset struct {
	ID        int64
	AccountID int64
	Kind      Kind
	Name      string
	PixelID   string
	// EventSource is TikTok's event_source: web, crm or offline.
	EventSource string
	// EventNames is a JSON object of the destination's own names of our
	// events, over its kind's defaults; Google's are conversion action ids.
	EventNames string
	// LoginAccount, ClientID and Consent are Google's: the manager account,
	// the OAuth client id, and the consent every request states.
	LoginAccount    string
	ClientID        string
	Consent         Consent
	TokenSealed     string
	TokenLast4      string `gorm:"column:token_last4"`
	TokenEnv        string
	AppSecretSealed string
	AppSecretEnv    string
	TestEventCode   string
	APIVersion      string `gorm:"column:api_version"`
	Mode            Mode
	LDU             LDU `gorm:"column:ldu"`
	// PausedAt is set when Meta refused the token; nothing is sent until a
	// person saves a new one.
	PausedAt     *time.Time
	PausedReason string
	// HeldSince is set while Meta or the network fails the dataset's
	// requests (an outage, throttling): its events wait, spending no
	// attempt, and one probe batch at a time tries Meta, at HoldUntil.
	HeldSince *time.Time
	HoldUntil *time.Time
	// HoldTries counts the failed tries of the hold, for the backoff;
	// HoldError is the last one's error.
	HoldTries int
	HoldError string
	// LeaseToken and LeaseUntil are the lease of the probe under way, the
	// one batch that tries Meta for a held dataset (store.TakeProbe).
	LeaseToken *int64
	LeaseUntil *time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Kind is the platform a destination sends to.
type Kind string

// The kinds of destination.
const (
	KindMeta      Kind = "meta"
	KindTikTok    Kind = "tiktok"
	KindGoogle    Kind = "google"
	KindPinterest Kind = "pinterest"
)

// Kinds lists the kinds, Meta first.
var Kinds = []Kind{KindMeta, KindTikTok, KindGoogle, KindPinterest}

// Of is the kind of a dataset, Meta's when it has none (one made in Go
// before it was saved).
func (d Dataset) Of() Kind {
	if d.Kind == "" {
		return KindMeta
	}
	return d.Kind
}

// Consent is a Google destination's consent for ad user data and
// personalisation: "" states none.
type Consent string

// The consents.
const (
	ConsentNone    Consent = ""
	ConsentGranted Consent = "granted"
	ConsentDenied  Consent = "denied"
)

// EventStatus is where an event is in the outbox.
type EventStatus string

// Event statuses.
const (
	EventQueued  EventStatus = "queued"
	EventSending EventStatus = "sending"
	EventSent    EventStatus = "sent"
	EventFailed  EventStatus = "failed"
	EventExpired EventStatus = "expired"
	EventDryRun  EventStatus = "dry_run"
)

// EventStatuses lists every status as people read it (Event.State), in the
// order the send log shows them.
var EventStatuses = []EventStatus{EventQueued, EventSending, EventSent, EventHeldBack, EventFailed, EventExpired,
	EventNotSent, EventDryRun}

// Origins of an event.
const (
	OriginDefault = "default" // the automatic_completed default before send rules (migration 0015)
	OriginRule    = "rule"    // a send rule's; OriginID is the rule's id
	OriginStage   = "stage"
	OriginTest    = "test"
)

// Event is one conversion event in the outbox: queued with its lead, sent
// by the dispatcher. EventID is deterministic, and (DatasetID, EventID) is
// unique, so a lead can never queue the same event twice.
type Event struct {
	ID        int64
	AccountID int64
	DatasetID int64
	LeadID    int64
	Origin    string
	OriginID  *int64
	EventName string
	EventID   string
	EventTime time.Time
	Value     *float64
	Currency  string
	// ActionSource and TestEventCode, when set, are the send rule's
	// overrides of the lead's action_source and the dataset's test code.
	ActionSource  string
	TestEventCode string
	// StageChangeID is the stage change a stage event was sent for.
	StageChangeID *int64
	// FilledIn: a stage event queued for an earlier mapped stage the lead
	// skipped, before the stage it reached, so Meta sees the funnel in
	// order.
	FilledIn bool
	// LeadEventSource is the CRM a stage event's change came from, sent
	// as lead_event_source when the account names no CRM.
	LeadEventSource string
	// Status, Attempts, LastError, FBTraceID, RequestID, SentAt and
	// UpdatedAt are the event's state, which the store keeps apart from the
	// event and reads with it: an unsent event's in unsent_events (where
	// NextAttemptAt and LeaseUntil are its schedule), a sent event's in
	// event_sends. They are never written with the event.
	Status        EventStatus `gorm:"->"`
	Attempts      int         `gorm:"->"`
	NextAttemptAt time.Time   `gorm:"->"`
	LeaseUntil    *time.Time  `gorm:"->"`
	LastError     string      `gorm:"->"`
	FBTraceID     string      `gorm:"->;column:fbtrace_id"`
	RequestID     *int64      `gorm:"->"`
	// Payload is the exact JSON of the event as built for Meta (hashes
	// only): prepared when it was queued (see PayloadStamp), or built when
	// it was sent, held back or dry-run; once sent, the JSON Meta received.
	// Events sent before migration 0010 have none: their JSON is in their
	// request's Payload.
	Payload string
	// PayloadStamp is capi.Stamp of the settings a queued event's Payload
	// was prepared with; 0 when it has none to send as it is.
	PayloadStamp int64
	SentAt       *time.Time `gorm:"->"`
	CreatedAt    time.Time
	UpdatedAt    time.Time `gorm:"->"`
}

// Stage is one of an account's CRM stages, in the order leads move
// through them (Position).
type Stage struct {
	ID        int64
	AccountID int64
	Name      string
	Position  int
	// Booking marks the stage at which a lead is booked.
	Booking bool
	// Aliases are the other labels CRMs and files use for the stage
	// ("Closed Won", "closedwon"): a change under one records this stage.
	Aliases   Labels
	CreatedAt time.Time
}

// SendRuleVersion is one change of a send rule: who made it, when, and the
// rule as JSON before and after ("" when it was created or deleted).
type SendRuleVersion struct {
	ID        int64
	AccountID int64
	RuleID    int64
	UserID    *int64
	Before    string
	After     string
	CreatedAt time.Time
}

// SendRequest is one request to Meta's Graph API and its outcome.
type SendRequest struct {
	ID             int64
	AccountID      int64
	DatasetID      int64
	Kind           string // "batch" or "test"
	StartedAt      time.Time
	DurationMS     int `gorm:"column:duration_ms"`
	EventsCount    int
	HTTPStatus     int `gorm:"column:http_status"`
	EventsReceived int
	FBTraceID      string `gorm:"column:fbtrace_id"`
	Error          string
	// Response is Meta's reply body, cut to a few KiB.
	Response string
	// Payload is the "data" of a batch sent before migration 0010, which
	// the event page reads back; since, each event keeps its own JSON.
	Payload string
}

// SiteKey is a public key (pk_...) that a website's capture snippet
// carries in its pages (DESIGN.md, "Browser capture"). It reaches only the
// collect API, and only from its allowed origins.
type SiteKey struct {
	ID        int64
	AccountID int64
	Name      string
	Key       string
	CreatedAt time.Time
	RevokedAt *time.Time
	// Origins are the allowed origins, oldest first; loaded with the key.
	Origins []SiteKeyOrigin `gorm:"-"`
}

// SiteKeyOrigin is an origin a site key may be used from (scheme, host and
// port, like https://www.example.com), and when a page of it last posted.
type SiteKeyOrigin struct {
	SiteKeyID  int64
	Origin     string
	CreatedAt  time.Time
	LastSeenAt *time.Time
}
