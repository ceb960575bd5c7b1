package rule

import (
	"strconv"
	"strings"

	"github.com/leadsignal/leadsignal/models"
)

// Settings of a stored rule in words, as its history on the rule page and
// the setup file's list of changes show them.

// ConditionsText says conditions in words joined by AND or OR: `City is
// "Berlin" OR Form field budget is greater than 5000`; "" for none. Groups
// follow the plain conditions, each in parentheses with its own
// combinator: `Junk is false AND (City is "Berlin" OR Phone is valid is
// true)`.
func ConditionsText(c Combinator, cs []Condition, gs ...Group) string {
	words := make([]string, 0, len(cs)+len(gs))
	for _, cd := range cs {
		words = append(words, cd.String())
	}
	for _, g := range gs {
		text := ConditionsText(g.Combinator, g.Conditions)
		if len(g.Conditions) > 1 && len(cs)+len(gs) > 1 {
			text = "(" + text + ")"
		}
		words = append(words, text)
	}
	return strings.Join(words, joiner(c))
}

// joiner is how combinator c joins conditions in words.
func joiner(c Combinator) string {
	if c == Or {
		return " OR "
	}
	return " AND "
}

// Text says s's conditions and groups in words, as ConditionsText.
func (s Spec) Text() string { return ConditionsText(s.Combinator, s.Conditions, s.Groups...) }

// ValueText says the value a rule gives its events: a fixed amount, "from
// <field>", or "none".
func ValueText(r models.SendRule) string {
	switch {
	case r.ValueField != "":
		return "from " + r.ValueField
	case r.Value != nil:
		return strconv.FormatFloat(*r.Value, 'f', -1, 64)
	}
	return "none"
}

// CurrencyText says the currency of a rule's values: a code, "from
// <field>", or "the account's".
func CurrencyText(r models.SendRule) string {
	switch {
	case r.CurrencyField != "":
		return "from " + r.CurrencyField
	case r.Currency != "":
		return r.Currency
	}
	return "the account's"
}

// ActionSourceText says a rule's action_source: its override, or "from the
// lead's source".
func ActionSourceText(r models.SendRule) string {
	if r.ActionSource == "" {
		return "from the lead's source"
	}
	return r.ActionSource
}

// Label is how t reads in the rule form's match type select for a field of
// kind k: "is greater than", and for a yes-or-no field "is unknown" rather
// than "is empty". Problems for a person (Schema.Words) name match types
// by it.
func (t MatchType) Label(k Kind) string {
	switch {
	case k == Bool && t == IsEmpty:
		return "is unknown"
	case k == Bool && t == NotEmpty:
		return "is known"
	case t == Regex:
		return "matches regex"
	}
	return t.words()
}

// modeLabels name the send modes as the rule form offers them.
var modeLabels = map[Mode]string{
	AutomaticCompleted: "Every completed lead",
	AutomaticPartial:   "Partial leads",
	AutomaticMatch:     "Leads that meet conditions",
	Manual:             "Only when a person clicks",
	Stage:              "Stage mapping",
}

// Label names m as the rule form's send mode select does; an unknown mode
// as it is stored.
func (m Mode) Label() string {
	if l, ok := modeLabels[m]; ok {
		return l
	}
	return string(m)
}

// labelOf is the label of the field a condition names, built in or not.
func labelOf(name string) string {
	if f, ok := builtin(name); ok {
		return f.Label
	}
	return customOrUnknown(name).Label
}

// mode names m in a problem: by its label in words (Schema.Words), else
// as a setup file writes it.
func (c *compiler) mode(m Mode) string {
	if c.schema.Words {
		return "'" + m.Label() + "'"
	}
	return string(m)
}

// matchType names t, on field f, in a problem: as the form's select shows
// it in words (Schema.Words), else as a setup file writes it.
func (c *compiler) matchType(f Field, t MatchType) string {
	if c.schema.Words {
		return "'" + t.Label(f.Kind) + "'"
	}
	return string(t)
}
