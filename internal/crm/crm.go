// Package crm reads what a CRM sends leadsignal: it checks a webhook
// delivery's signature or credentials over the raw body, splits it into the
// stage changes it carries (HubSpot, Pipedrive, or a generic JSON mapped by
// dotted paths), and asks the CRM's API for what a delivery lacks (the
// deal's contact, amount and currency; the pipelines' stage labels).
//
// It knows nothing of the database: the hook handler stores each Change as
// an inbox row, and the worker (internal/crmsync) reads it back with Parse.
// docs/crm.md describes the contract.
package crm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"time"
	"unicode/utf8"
)

// Kind is the kind of a CRM connection.
type Kind string

// Connection kinds.
const (
	HubSpot   Kind = "hubspot"
	Pipedrive Kind = "pipedrive"
	Generic   Kind = "generic"
)

// Kinds lists the kinds in the order the UI offers them.
var Kinds = []Kind{HubSpot, Pipedrive, Generic}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool { return k == HubSpot || k == Pipedrive || k == Generic }

// Title is the kind's name as people write it, and the lead_event_source
// Meta is sent when the account names no CRM.
func (k Kind) Title() string {
	switch k {
	case HubSpot:
		return "HubSpot"
	case Pipedrive:
		return "Pipedrive"
	}
	return "Generic webhook"
}

// Change is one stage change a delivery carries, as its CRM wrote it.
type Change struct {
	// Key tells this change apart from every other the connection
	// receives, and a retry or duplicate of it from nothing else: the
	// CRM's idempotency key (docs/crm.md).
	Key string
	// Body is the change's own JSON as it came: one element of HubSpot's
	// array, Pipedrive's whole body, one generic object.
	Body json.RawMessage
	// ObjectID is the CRM's deal (or record) id; "" for a generic change
	// that maps none.
	ObjectID string
	// StageID is the CRM's stage id (not its label).
	StageID string
	// OccurredAt is the CRM's own time of the change.
	OccurredAt time.Time
	// PersonID is the deal's person or contact id when the delivery
	// carries it (Pipedrive's person_id).
	PersonID string
	// Value and Currency are the deal's amount when the delivery carries
	// it (Pipedrive, generic).
	Value    *float64
	Currency string
	// Lead names the lead when the delivery carries a key (generic).
	Lead LeadRef
	// ChangeID is the sender's own change id (generic, optional).
	ChangeID string
	// Problem, when not "", is why the body cannot become a stage change
	// (no deal id, no stage, an event type leadsignal does not read): the
	// delivery is stored all the same and shown as needing attention,
	// never refused (docs/crm.md).
	Problem string
}

// LeadRef is what a CRM knows of a lead's person, in the order a lead is
// looked up by: leadsignal's lead id, the form's external id, Meta's lead
// id, then email, then phone.
type LeadRef struct {
	ID         string
	ExternalID string
	MetaLeadID string
	Email      string
	Phone      string
}

// Empty reports whether r names no key at all.
func (r LeadRef) Empty() bool { return r == LeadRef{} }

// Deal is what a CRM's API says of a deal.
type Deal struct {
	StageID  string
	Value    *float64
	Currency string
	// Contacts are the ids of its associated contacts (HubSpot) or of its
	// person (Pipedrive), first first.
	Contacts []string
}

// Stage is one stage of a CRM's pipelines, as its API lists it.
type Stage struct {
	ID       string
	Label    string
	Pipeline string
	// Order is its place in its pipeline.
	Order int
}

// SecretLabel and APITokenLabel bind a connection's sealed secrets to it
// (internal/seal's label): a sealed value copied to another connection
// does not open. The token never changes, and is known before the
// connection is stored.
func SecretLabel(token string) string { return "crm-secret:" + token }

// APITokenLabel: see SecretLabel.
func APITokenLabel(token string) string { return "crm-api-token:" + token }

// leadIDPropertyRE is a HubSpot property's internal name or a Pipedrive
// field's key.
var leadIDPropertyRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)

// ValidLeadIDProperty reports whether p can name the contact property
// that holds Meta's lead id ("" names none): the connection form and the
// setup file check it alike.
func ValidLeadIDProperty(p string) bool { return p == "" || leadIDPropertyRE.MatchString(p) }

// HookPath is the path of a connection's hook URL, /hooks/<kind>/<token>.
func HookPath(kind, token string) string { return "/hooks/" + kind + "/" + token }

// MaxKey bounds an idempotency key or change id as leadsignal keeps it:
// the stage API's longest change_id, in bytes.
const MaxKey = 200

// FitKey keeps a key within MaxKey bytes: a longer one is its SHA-256,
// still one key per change.
func FitKey(k string) string {
	if len(k) <= MaxKey {
		return k
	}
	sum := sha256.Sum256([]byte(k))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// MaxLabel bounds a CRM's stage id, stage label, pipeline or object id as
// leadsignal keeps it, in bytes.
const MaxLabel = 200

// Cut shortens s to at most MaxLabel bytes, on a character boundary.
func Cut(s string) string {
	n := MaxLabel
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
