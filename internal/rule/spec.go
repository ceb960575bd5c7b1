package rule

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/leadsignal/leadsignal/models"
)

// Mode says when a send rule sends.
type Mode string

// Send modes (docs/setup.md, "send_rules").
const (
	// AutomaticCompleted sends every completed lead that is not junk. It is
	// the default, and takes no conditions.
	AutomaticCompleted Mode = "automatic_completed"
	// AutomaticPartial sends partial leads, under a custom event name.
	AutomaticPartial Mode = "automatic_partial"
	// AutomaticMatch sends completed leads that meet the conditions.
	AutomaticMatch Mode = "automatic_match"
	// Booking is a legacy name, found only in old setup files and in
	// data from before migration 0019: a booking rule sent when a lead
	// reached the account's booking stage, which is now the stage mapping
	// of that stage (setup apply converts such a rule). It is no mode of
	// Modes, and a rule of it does not compile.
	Booking Mode = "booking"
	// Manual sends only when a person clicks.
	Manual Mode = "manual"
	// Stage is a stage mapping's mode: it sends when a lead reaches the
	// mapping's CRM stage (models.SendRule.Stage). Stage mappings are made
	// on the Stages page and in a setup file's stage_mappings, not among
	// the send rules, so Modes leaves it out.
	Stage Mode = "stage"
)

// Modes lists every mode, in the order the rule form offers them.
var Modes = []Mode{AutomaticCompleted, AutomaticPartial, AutomaticMatch, Manual}

// Valid reports whether m is one of Modes.
func (m Mode) Valid() bool {
	for _, v := range Modes {
		if m == v {
			return true
		}
	}
	return false
}

// problem says why m is no send mode: Booking is named as the stage
// mapping it became, any other as not one of Modes.
func (m Mode) problem() string {
	if m == Booking {
		return "booking is no longer a send mode: a lead reaching the booking stage is sent by a stage mapping of that stage; " +
			"map it to the event on the Stages page (in a setup file, in stage_mappings)"
	}
	return fmt.Sprintf("%q is not a send mode; use one of %s", string(m), join(Modes))
}

// OnCapture reports whether rules of mode m are consulted when a lead is
// captured; the others wait for a stage change or a click.
func (m Mode) OnCapture() bool {
	return m == AutomaticCompleted || m == AutomaticPartial || m == AutomaticMatch
}

// Combinator joins a rule's conditions.
type Combinator string

// Combinators. An empty combinator reads as And.
const (
	And Combinator = "and"
	Or  Combinator = "or"
)

// MatchType is how a condition compares a field with its pattern.
type MatchType string

// Match types.
const (
	Equals      MatchType = "equals"
	NotEquals   MatchType = "not_equals"
	Contains    MatchType = "contains"
	NotContains MatchType = "not_contains"
	StartsWith  MatchType = "starts_with"
	EndsWith    MatchType = "ends_with"
	Regex       MatchType = "regex"
	InList      MatchType = "in_list"
	NotInList   MatchType = "not_in_list"
	IsEmpty     MatchType = "is_empty"
	NotEmpty    MatchType = "not_empty"
	GT          MatchType = "gt"
	LT          MatchType = "lt"
	// GTE and LTE are gt and lt that take the number itself: "won deals
	// of at least 500 EUR" is change.value gte 500.
	GTE MatchType = "gte"
	LTE MatchType = "lte"
)

// MatchTypes lists every match type, in the order the rule form offers them.
var MatchTypes = []MatchType{
	Equals, NotEquals, Contains, NotContains, StartsWith, EndsWith, Regex,
	InList, NotInList, IsEmpty, NotEmpty, GT, LT, GTE, LTE,
}

// Numeric reports whether t compares numbers: gt, lt, gte and lte.
func (t MatchType) Numeric() bool { return t == GT || t == LT || t == GTE || t == LTE }

// TakesPattern reports whether a condition of match type t needs a pattern:
// all but is_empty and not_empty do.
func (t MatchType) TakesPattern() bool { return t != IsEmpty && t != NotEmpty }

// words is how t reads in a sentence about a text field.
func (t MatchType) words() string {
	switch t {
	case Equals:
		return "is"
	case NotEquals:
		return "is not"
	case Contains:
		return "contains"
	case NotContains:
		return "does not contain"
	case StartsWith:
		return "starts with"
	case EndsWith:
		return "ends with"
	case Regex:
		return "matches the regular expression"
	case InList:
		return "is one of"
	case NotInList:
		return "is none of"
	case IsEmpty:
		return "is empty"
	case NotEmpty:
		return "is not empty"
	case GT:
		return "is greater than"
	case LT:
		return "is less than"
	case GTE:
		return "is at least"
	case LTE:
		return "is at most"
	}
	return string(t)
}

// Condition compares one field of a lead with a pattern.
type Condition struct {
	Field     string    `json:"field"`
	MatchType MatchType `json:"match_type"`
	Pattern   string    `json:"pattern"`
}

// String says what the condition asks, in plain words with the field's
// label: `Email domain is "gmail.com"`, `Junk is false`.
func (c Condition) String() string {
	f, ok := builtin(c.Field)
	if !ok {
		f = customOrUnknown(c.Field)
	}
	label := f.Label
	switch {
	case !c.MatchType.TakesPattern():
		return label + " " + c.MatchType.words()
	case f.Kind == Bool && (c.MatchType == Equals || c.MatchType == NotEquals):
		return label + " " + c.MatchType.words() + " " + strings.ToLower(strings.TrimSpace(c.Pattern))
	case c.MatchType == InList || c.MatchType == NotInList:
		return label + " " + c.MatchType.words() + " " + quoteList(listItems(c.Pattern))
	case c.MatchType.Numeric():
		return label + " " + c.MatchType.words() + " " + strings.TrimSpace(c.Pattern)
	}
	return label + " " + c.MatchType.words() + " " + quote(c.Pattern)
}

// Spec is a send rule as a person writes it: in the rule form or in the
// setup file's send_rules.
type Spec struct {
	// Mode is when the rule sends; "" reads as AutomaticCompleted.
	Mode Mode `json:"mode"`
	// EventName is the Meta event the rule sends: one of StandardEvents or
	// a custom name (see EventNameProblem).
	EventName string `json:"event_name"`
	// Combinator joins the rule's items: each of Conditions, and each of
	// Groups.
	Combinator Combinator  `json:"combinator"`
	Conditions []Condition `json:"conditions"`
	// Groups are conditions joined by their own combinator, one level
	// deep: "(campaign A OR a valid phone) AND not junk" is the condition
	// "not junk" and one "or" group, joined by "and".
	Groups []Group `json:"groups,omitempty"`
}

// Group is conditions joined by their own combinator: one item of a
// rule's conditions, beside its plain ones. Groups hold conditions only,
// never groups.
type Group struct {
	Combinator Combinator  `json:"combinator"`
	Conditions []Condition `json:"conditions"`
}

// Count is how many conditions s has, its groups' included.
func (s Spec) Count() int {
	n := len(s.Conditions)
	for _, g := range s.Groups {
		n += len(g.Conditions)
	}
	return n
}

// All is every condition of s, in order: its plain conditions, then each
// group's. A Matcher's condition indexes (Result.Condition, held) count
// in this order.
func (s Spec) All() []Condition {
	all := make([]Condition, 0, s.Count())
	all = append(all, s.Conditions...)
	for _, g := range s.Groups {
		all = append(all, g.Conditions...)
	}
	return all
}

// StoredConditions is the JSON a send rule's conditions column keeps of
// s's conditions and groups: an array of its plain conditions, then one
// {"combinator", "conditions"} object per group. A rule without groups
// keeps the plain array it always kept.
func (s Spec) StoredConditions() string {
	items := make([]any, 0, len(s.Conditions)+len(s.Groups))
	for _, c := range s.Conditions {
		items = append(items, c)
	}
	for _, g := range s.Groups {
		if g.Conditions == nil {
			g.Conditions = []Condition{}
		}
		items = append(items, g)
	}
	b, _ := json.Marshal(items)
	return string(b)
}

// decodeConditions reads a conditions column (Spec.StoredConditions): an
// item with a "conditions" key is a group, any other a condition.
func decodeConditions(text string) ([]Condition, []Group, error) {
	var items []json.RawMessage
	if err := json.Unmarshal([]byte(text), &items); err != nil {
		return nil, nil, err
	}
	conds := make([]Condition, 0, len(items))
	var groups []Group
	for _, raw := range items {
		var it struct {
			Condition
			Combinator Combinator   `json:"combinator"`
			Conditions *[]Condition `json:"conditions"`
		}
		if err := json.Unmarshal(raw, &it); err != nil {
			return nil, nil, err
		}
		if it.Conditions != nil {
			groups = append(groups, Group{Combinator: it.Combinator, Conditions: *it.Conditions})
			continue
		}
		conds = append(conds, it.Condition)
	}
	return conds, groups, nil
}

// Problem is one reason a Spec does not compile: the path of the part at
// fault, JSON style ("event_name", "conditions[2].pattern", conditions
// counted from 0), and what to do about it in words a marketer
// understands.
type Problem struct {
	Path    string
	Message string
}

// String is "path: message".
func (p Problem) String() string { return p.Path + ": " + p.Message }

// SpecOf is the Spec of a stored send rule. Conditions that do not decode
// are a Problem at "conditions".
func SpecOf(r models.SendRule) (Spec, []Problem) {
	s := Spec{Mode: Mode(r.Mode), EventName: r.EventName, Combinator: Combinator(r.Combinator)}
	if strings.TrimSpace(r.Conditions) != "" {
		conds, groups, err := decodeConditions(r.Conditions)
		if err != nil {
			return s, []Problem{{Path: "conditions", Message: "the stored conditions cannot be read: " + err.Error()}}
		}
		s.Conditions, s.Groups = conds, groups
	}
	return s, nil
}

// CompileRule compiles a stored send rule, as Compile does its Spec.
func CompileRule(r models.SendRule, schema Schema) (*Matcher, []Problem) {
	s, problems := SpecOf(r)
	if problems != nil {
		return nil, problems
	}
	return Compile(s, schema)
}
