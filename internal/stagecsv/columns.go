package stagecsv

import (
	"regexp"
	"strings"
	"unicode"
)

// Target is a field of a stage change that a column fills: the stage
// API's body fields, the lead's keys named as the API names them.
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
	OccurredAt Target = "occurred_at"
	Value      Target = "value"
	Currency   Target = "currency"
	ChangeID   Target = "change_id"
)

// Targets lists every target in order.
var Targets = []Target{ID, ExternalID, MetaLeadID, Email, Phone, Stage, OccurredAt, Value, Currency, ChangeID}

// LeadKeys are the targets that find a row's lead: when a row has several,
// the first in this order decides, as in the stage API.
var LeadKeys = []Target{ID, ExternalID, MetaLeadID, Email, Phone}

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
	case OccurredAt:
		return "Date of the change"
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
// the lead keys is needed too).
func (t Target) Required() bool { return t == Stage || t == OccurredAt }

// aliases maps column names, folded (lowercase letters and digits only),
// to their target. The names are the stage API's and those CRMs
// (HubSpot, Pipedrive, Salesforce, Zoho, spreadsheets) export.
var aliases = map[string]Target{}

func init() {
	names := map[Target][]string{
		ID:         {"id", "lead id", "leadsignal id", "leadsignal lead id", "lead_id"},
		ExternalID: {"external id", "ext id", "external lead id", "crm id", "crm lead id", "lead external id"},
		MetaLeadID: {"meta lead id", "facebook lead id", "fb lead id", "leadgen id", "meta leadgen id", "instant form lead id", "lead gen id"},
		Email:      {"email", "e-mail", "email address", "e-mail address", "mail", "contact email", "lead email", "work email", "primary email", "person email"},
		Phone:      {"phone", "phone number", "mobile", "mobile phone", "mobile number", "cell", "cell phone", "telephone", "tel", "contact phone", "lead phone", "person phone", "primary phone"},
		Stage:      {"stage", "deal stage", "lead stage", "pipeline stage", "stage name", "lead status", "status", "deal status", "lifecycle stage", "opportunity stage", "new stage", "to stage"},
		OccurredAt: {"occurred at", "occurred", "date", "close date", "closed date", "won date", "stage date", "stage changed", "stage change date", "date changed", "changed at", "change date", "moved at", "entered at", "date entered", "stage entered", "timestamp", "time", "datetime", "date time", "updated at", "last modified", "last modified date", "modified date"},
		Value:      {"value", "amount", "deal value", "deal amount", "revenue", "price", "total", "opportunity amount", "amount in company currency"},
		Currency:   {"currency", "currency code", "deal currency", "currency iso code", "amount currency", "value currency"},
		ChangeID:   {"change id", "event id", "stage change id", "history id", "activity id", "record change id"},
	}
	for t, ns := range names {
		for _, n := range ns {
			aliases[fold(n)] = t
		}
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
// header: a required target without a column, no lead key, a column
// beyond the header, or one column for two targets.
func (m Mapping) Problems(header []string) []string {
	var ps []string
	hasKey := false
	for _, t := range LeadKeys {
		if m.Column(t) >= 0 {
			hasKey = true
		}
	}
	if !hasKey {
		ps = append(ps, "Pick the column that finds each row's lead: its email, phone, external id, Meta lead id or leadsignal id.")
	}
	for _, t := range Targets {
		if t.Required() && m.Column(t) < 0 {
			ps = append(ps, "Pick the column of the "+strings.ToLower(t.Label())+" ("+string(t)+").")
		}
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

func quoteName(s string) string {
	if s == "" {
		return "(no name)"
	}
	return "\u201c" + s + "\u201d"
}

// Guess maps f's columns by their names (ignoring case, spaces and
// punctuation, with the aliases above), the first column of a name
// winning; a column named like a lead id whose values are all 15 to 17
// digits is Meta's lead id. The date order is the one the occurred_at
// column's values allow (a first number over 12 means day first, a second
// over 12 month first), else month first for accounts in the US, Canada
// or the Philippines (country, an ISO code) and for accounts without a
// country, else day first.
func Guess(f File, country string) Mapping {
	m := Mapping{Columns: map[Target]int{}}
	for i, h := range f.Header {
		t, ok := aliases[fold(h)]
		if !ok {
			continue
		}
		if t == ID && metaLeadIDs(f, i) {
			t = MetaLeadID
		}
		if _, taken := m.Columns[t]; !taken {
			m.Columns[t] = i
		}
	}
	m.DateOrder = guessOrder(f, m.Column(OccurredAt), country)
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

func guessOrder(f File, col int, country string) DateOrder {
	dayFirst, monthFirst := false, false
	if col >= 0 {
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
