package stagecsv

import (
	"regexp"
	"strings"
	"unicode"
)

// Target is a field of a stage change that a column fills: the stage
// API's body fields, the lead's keys named as the API names them, and the
// columns of a CRM's deal export that decide a row's stage and date.
type Target string

// Targets, in the order of the stage API's body; the lead keys in the
// order in which the first one given decides.
const (
	ID         Target = "id"
	ExternalID Target = "external_id"
	MetaLeadID Target = "meta_lead_id"
	Email      Target = "email"
	Phone      Target = "phone"
	Stage      Target = "stage"
	// Status is a deal's open, won or lost: Won or Lost makes the row's
	// stage won or lost, whatever its pipeline stage.
	Status     Target = "status"
	OccurredAt Target = "occurred_at"
	// WonAt is the won (or closed) time: a won row's date.
	WonAt Target = "won_at"
	// UpdatedAt is the deal's last update: the date of a row that has
	// neither of the others.
	UpdatedAt Target = "updated_at"
	Value     Target = "value"
	Currency  Target = "currency"
	ChangeID  Target = "change_id"
)

// Targets lists every target in order.
var Targets = []Target{ID, ExternalID, MetaLeadID, Email, Phone, Stage, Status, OccurredAt, WonAt, UpdatedAt, Value, Currency, ChangeID}

// LeadKeys are the targets that find a row's lead: when a row has several,
// the first in this order decides, as in the stage API.
var LeadKeys = []Target{ID, ExternalID, MetaLeadID, Email, Phone}

// DateTargets are the targets a row's date may come from (Reader.Row
// says which, by the row's meaning).
var DateTargets = []Target{OccurredAt, WonAt, UpdatedAt}

// Label is the target's name for people.
func (t Target) Label() string {
	switch t {
	case ID:
		return "Lead id (leadsignal's)"
	case ExternalID:
		return "External id"
	case MetaLeadID:
		return "Meta lead id"
	case Email:
		return "Email"
	case Phone:
		return "Phone"
	case Stage:
		return "Stage"
	case Status:
		return "Status (open, won, lost)"
	case OccurredAt:
		return "Date of the change"
	case WonAt:
		return "Won date"
	case UpdatedAt:
		return "Update time"
	case Value:
		return "Value"
	case Currency:
		return "Currency"
	case ChangeID:
		return "Change id"
	}
	return string(t)
}

// Required reports whether every file needs the target's column (one of
// the lead keys and one of the DateTargets are needed too).
func (t Target) Required() bool { return t == Stage }

// IsDate reports whether t is one of the DateTargets.
func (t Target) IsDate() bool { return t == OccurredAt || t == WonAt || t == UpdatedAt }

// aliases maps column names, folded (lowercase letters and digits only),
// to their target. The names are the stage API's and those the CRMs'
// deal exports use (docs/stage-upload.md lists them by CRM).
var aliases = map[string]Target{}

// statusAliases are the names of a deal's open/won/lost column. Such a
// column is the Status when the file has a stage column too, else the
// stage itself (a spreadsheet's "Status" of qualified, booked, won).
var statusAliases = map[string]bool{}

// contactAliases are the names of a column that names a deal's contact:
// its email when written "Name (email)" or "Name <email>". Such a column
// is the Email only when its values hold email addresses and no email
// column is in the file.
var contactAliases = map[string]bool{}

func init() {
	names := map[Target][]string{
		ID:         {"id", "lead id", "leadsignal id", "leadsignal lead id", "lead_id"},
		ExternalID: {"external id", "ext id", "external lead id", "crm id", "crm lead id", "lead external id"},
		MetaLeadID: {"meta lead id", "facebook lead id", "fb lead id", "leadgen id", "meta leadgen id", "instant form lead id", "lead gen id"},
		Email: {"email", "e-mail", "email address", "e-mail address", "mail", "contact email", "lead email", "work email", "primary email",
			"person email", "Person - Email", "contact_email", "Contact Email Address", "Email (Contact)"},
		Phone: {"phone", "phone number", "mobile", "mobile phone", "mobile number", "cell", "cell phone", "telephone", "tel", "contact phone",
			"lead phone", "person phone", "primary phone", "Person - Phone", "contact_phone"},
		Stage: {"stage", "deal stage", "lead stage", "pipeline stage", "stage name", "lead status", "lifecycle stage", "opportunity stage",
			"new stage", "to stage", "Deal - Stage", "status_label", "Stage (pipeline)"},
		OccurredAt: {"occurred at", "occurred", "date", "stage date", "stage changed", "stage change date", "date changed", "changed at",
			"change date", "moved at", "entered at", "date entered", "stage entered", "timestamp", "time", "datetime", "date time",
			"last stage change", "last stage change date", "Deal - Last stage change", "stage change time", "date_status_changed"},
		WonAt: {"won date", "won time", "date won", "won at", "won on", "close date", "closed date", "closing date", "close time",
			"closed at", "closed on", "deal closed on", "Deal - Won time", "Deal - Deal closed on", "date_won"},
		UpdatedAt: {"updated at", "updated", "update time", "updated on", "updated date", "last updated", "date updated", "last modified",
			"last modified date", "modified date", "modified time", "date modified", "Deal - Update time", "date_updated", "last update"},
		Value: {"value", "amount", "deal value", "deal amount", "revenue", "price", "total", "total amount", "opportunity amount",
			"amount in company currency", "lead value", "opportunity value", "Deal - Value", "deal size"},
		Currency: {"currency", "currency code", "deal currency", "currency iso code", "amount currency", "value currency",
			"opportunity currency", "Deal - Currency", "Deal - Currency of value", "value_currency", "lead value currency"},
		ChangeID: {"change id", "event id", "stage change id", "history id", "activity id", "record change id"},
	}
	for t, ns := range names {
		for _, n := range ns {
			aliases[fold(n)] = t
		}
	}
	for _, n := range []string{"status", "deal status", "Deal - Status", "opportunity status", "status type", "status_type", "won", "is won"} {
		aliases[fold(n)] = Status
		statusAliases[fold(n)] = true
	}
	for _, n := range []string{"associated contact", "associated contacts", "contact", "contacts", "contact name", "contact person",
		"primary contact", "person", "Deal - Contact person", "contact_name", "customer", "Person - Name"} {
		contactAliases[fold(n)] = true
	}
}

// fold is a column name reduced to lowercase letters and digits, so that
// "Deal Stage", "deal_stage" and "DealStage" are one name.
func fold(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// Mapping says which column fills which target, and how the file writes
// a date like 03/04/2026.
type Mapping struct {
	// Columns are column indexes (0 is the first) by target; a target
	// without one is left out of every row.
	Columns map[Target]int `json:"columns"`
	// DateOrder reads slash dates: month first or day first.
	DateOrder DateOrder `json:"date_order"`
}

// DateOrder is how a file writes a date with slashes, like 03/04/2026.
type DateOrder string

// Date orders: 03/04/2026 is March 4 (MonthFirst, as in the US) or 3 April
// (DayFirst). A date with dots, 03.04.2026, is always day first.
const (
	MonthFirst DateOrder = "mdy"
	DayFirst   DateOrder = "dmy"
)

// Column is the column that fills t, or -1.
func (m Mapping) Column(t Target) int {
	if c, ok := m.Columns[t]; ok {
		return c
	}
	return -1
}

// Problems are what keeps the mapping from reading a row of a file with
// header: a required target without a column, no lead key or no date, a
// column beyond the header, or one column for two targets.
func (m Mapping) Problems(header []string) []string {
	var ps []string
	if !m.hasAny(LeadKeys) {
		ps = append(ps, "Pick the column that finds each row's lead: its email, phone, external id, Meta lead id or leadsignal id.")
	}
	for _, t := range Targets {
		if t.Required() && m.Column(t) < 0 {
			ps = append(ps, "Pick the column of the "+strings.ToLower(t.Label())+" ("+string(t)+").")
		}
	}
	if !m.hasAny(DateTargets) {
		ps = append(ps, "Pick the column of the date of the change (occurred_at), or the won date and the update time.")
	}
	used := map[int]Target{}
	for _, t := range Targets {
		c := m.Column(t)
		if c < 0 {
			continue
		}
		if c >= len(header) {
			ps = append(ps, "The column chosen for "+t.Label()+" is not in the file.")
			continue
		}
		if o, ok := used[c]; ok {
			ps = append(ps, "The column "+quoteName(header[c])+" is chosen for both "+o.Label()+" and "+t.Label()+".")
		}
		used[c] = t
	}
	if m.DateOrder != MonthFirst && m.DateOrder != DayFirst {
		ps = append(ps, "Say how the file writes dates like 03/04/2026: month first or day first.")
	}
	return ps
}

func (m Mapping) hasAny(ts []Target) bool {
	for _, t := range ts {
		if m.Column(t) >= 0 {
			return true
		}
	}
	return false
}

func quoteName(s string) string {
	if s == "" {
		return "(no name)"
	}
	return "\u201c" + s + "\u201d"
}

// Guess maps f's columns by their names (ignoring case, spaces and
// punctuation, with the aliases above), the first column of a name
// winning. Beside the names:
//   - a column named like a lead id whose values are all 15 to 17 digits
//     is Meta's lead id;
//   - a status column (open, won, lost) is the Status when the file has a
//     stage column, else the stage;
//   - without an email column, a contact column (HubSpot's "Associated
//     Contact", ...) whose values hold email addresses is the email.
//
// The date order is the one the date columns' values allow (a first
// number over 12 means day first, a second over 12 month first), else
// month first for accounts in the US, Canada or the Philippines (country,
// an ISO code) and for accounts without a country, else day first.
func Guess(f File, country string) Mapping {
	m := Mapping{Columns: map[Target]int{}}
	status := -1 // the first status column named "status", not "won"
	for i, h := range f.Header {
		name := fold(h)
		t, ok := aliases[name]
		if !ok {
			continue
		}
		if t == ID && metaLeadIDs(f, i) {
			t = MetaLeadID
		}
		if t == Status && statusAliases[name] && !strings.Contains(name, "won") && status < 0 {
			status = i
		}
		if _, taken := m.Columns[t]; !taken {
			m.Columns[t] = i
		}
	}
	if _, ok := m.Columns[Stage]; !ok && status >= 0 {
		m.Columns[Stage] = status
		if m.Columns[Status] == status {
			delete(m.Columns, Status)
		}
	}
	if _, ok := m.Columns[Email]; !ok {
		for i, h := range f.Header {
			if contactAliases[fold(h)] && holdsEmails(f, i) {
				m.Columns[Email] = i
				break
			}
		}
	}
	var dates []int
	for _, t := range DateTargets {
		if c := m.Column(t); c >= 0 {
			dates = append(dates, c)
		}
	}
	m.DateOrder = guessOrder(f, dates, country)
	return m
}

var metaLeadIDRE = regexp.MustCompile(`^[0-9]{15,17}$`)

// metaLeadIDs reports whether column col's values (of the first rows) are
// all Meta lead ids.
func metaLeadIDs(f File, col int) bool {
	seen := 0
	for _, row := range f.Rows[:min(len(f.Rows), 100)] {
		v := Cell(row, col)
		if v == "" {
			continue
		}
		if !metaLeadIDRE.MatchString(v) {
			return false
		}
		seen++
	}
	return seen > 0
}

// holdsEmails reports whether one of column col's values (of the first
// rows) holds an email address.
func holdsEmails(f File, col int) bool {
	for _, row := range f.Rows[:min(len(f.Rows), 100)] {
		if emailRE.MatchString(Cell(row, col)) {
			return true
		}
	}
	return false
}

func guessOrder(f File, cols []int, country string) DateOrder {
	dayFirst, monthFirst := false, false
	for _, col := range cols {
		for _, row := range f.Rows {
			d, ok := parseNumeric(Cell(row, col))
			if !ok || d.sep == '.' {
				continue
			}
			if d.a > 12 && d.b <= 12 {
				dayFirst = true
			}
			if d.b > 12 && d.a <= 12 {
				monthFirst = true
			}
		}
	}
	switch {
	case dayFirst && !monthFirst:
		return DayFirst
	case monthFirst && !dayFirst:
		return MonthFirst
	}
	switch strings.ToUpper(country) {
	case "", "US", "CA", "PH", "PR", "GU", "VI", "AS", "MP", "UM":
		return MonthFirst
	}
	return DayFirst
}
