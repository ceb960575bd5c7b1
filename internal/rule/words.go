package rule

import (
	"strconv"
	"strings"

	"github.com/leadsignal/leadsignal/models"
)

// Settings of a stored rule in words, as its history on the rule page and
// the setup file's list of changes show them.

// ConditionsText says conditions in words joined by AND or OR: `City is
// "Berlin" OR Form field budget is greater than 5000`; "" for none.
func ConditionsText(c Combinator, cs []Condition) string {
	join := " AND "
	if c == Or {
		join = " OR "
	}
	words := make([]string, len(cs))
	for i, cd := range cs {
		words[i] = cd.String()
	}
	return strings.Join(words, join)
}

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
