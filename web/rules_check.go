package web

import (
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// checkRule builds the rule the form describes and checks all of it, as
// rule.CheckRule checks any rule, and what only a form can get wrong (a
// choice left out, a value that is no amount, a field left empty, text
// that is not UTF-8), and the account's cost budget with the rule in it.
// Each problem has the path of the input at fault.
func checkRule(in ruleInput, env ruleEnv) (models.SendRule, []rule.Problem) {
	r := in.sendRule(env.account.ID)
	var problems []rule.Problem
	add := func(path, msg string) { problems = append(problems, rule.Problem{Path: path, Message: msg}) }
	// Text that is not UTF-8 is refused where it was typed, before any
	// other check reads it (JSON would replace it silently).
	for _, t := range in.texts() {
		if !utf8.ValidString(t.text) {
			add(t.path, "This is not valid UTF-8 text: type it again.")
		}
	}
	if msg := validName(in.Name); msg != "" {
		add("name", msg)
	}
	if msg := checkDestinations(env.datasets, r); msg != "" {
		add("dataset_id", msg)
	}
	if in.Mode == "" {
		add("mode", "Choose a send mode.")
	}
	_, ruleProblems := rule.CheckRule(r, env.schema)
	problems = append(problems, ruleProblems...)
	if len(ruleProblems) == 0 {
		if msg := rule.CostProblem(rule.AccountCost(withRule(env.rules, r))); msg != "" {
			add("conditions", msg)
		}
	}
	checkValueModes(in, add)
	return r, problems
}

// checkValueModes checks the form's choices of how an event's value and
// currency are set: none, fixed or from a lead field, and for a stage
// mapping's form from the change as well (extra, the modes beyond those).
func checkValueModes(in ruleInput, add func(path, msg string), extra ...string) {
	switch {
	case in.ValueMode == "none" || slices.Contains(extra, in.ValueMode):
	case in.ValueMode == "fixed":
		if _, ok := rule.Amount(in.Value); !ok {
			add("value", fmt.Sprintf("Enter a number from 0 to %.0f, like 250 or 99.5, without a currency sign.", float64(rule.MaxValue)))
		}
	case in.ValueMode == "field":
		if in.ValueField == "" {
			add("value_field", "Name the lead field that holds the value, like fields.deal_value.")
		}
	default:
		add("value_mode", "Choose how the value is set.")
	}
	if in.ValueMode == "none" {
		return
	}
	switch {
	case in.CurrencyMode == "account" || slices.Contains(extra, in.CurrencyMode):
	case in.CurrencyMode == "fixed":
		if in.Currency == "" {
			add("currency", "Enter a three-letter ISO 4217 code, like USD or EUR.")
		}
	case in.CurrencyMode == "field":
		if in.CurrencyField == "" {
			add("currency_field", "Name the lead field that holds the currency, like fields.currency.")
		}
	default:
		add("currency_mode", "Choose how the currency is set.")
	}
}

// typed is one text the form took, with its path.
type typed struct{ path, text string }

// texts are the form's typed inputs, in the form's order.
func (in ruleInput) texts() []typed {
	t := []typed{{"name", in.Name}, {"event_name", in.EventName}}
	for i, c := range in.Conditions {
		t = append(t, typed{fmt.Sprintf("conditions[%d].field", i), c.Field}, typed{fmt.Sprintf("conditions[%d].pattern", i), c.Pattern})
	}
	for g, gr := range in.Groups {
		for i, c := range gr.Conditions {
			p := fmt.Sprintf("groups[%d].conditions[%d]", g, i)
			t = append(t, typed{p + ".field", c.Field}, typed{p + ".pattern", c.Pattern})
		}
	}
	return append(t, typed{"value", in.Value}, typed{"value_field", in.ValueField}, typed{"currency", in.Currency},
		typed{"currency_field", in.CurrencyField}, typed{"test_event_code", in.TestEventCode})
}

// destinationsProblem is the form's answer to destinations that are not
// the account's.
const destinationsProblem = "Choose among this account's destinations."

// checkDestinations says what is wrong with the destinations of r, a
// rule or mapping of the account whose destinations are ds, or "".
func checkDestinations(ds []models.Dataset, r models.SendRule) string {
	ids := r.Destinations()
	switch {
	case r.DatasetID == 0 && len(ids) == 1:
		return "Choose at least one destination."
	case len(ids) > store.MaxDestinations:
		return fmt.Sprintf("Choose at most %d destinations: each is one more event of every lead it matches.", store.MaxDestinations)
	}
	for _, id := range ids {
		if !slices.ContainsFunc(ds, func(d models.Dataset) bool { return d.ID == id }) {
			return destinationsProblem
		}
	}
	return ""
}

// withRule is the account's rules in their order with r, a new version,
// in place of its saved one; a new rule (no id) comes last, where it is
// created.
func withRule(rules []models.SendRule, r models.SendRule) []models.SendRule {
	out := make([]models.SendRule, 0, len(rules)+1)
	placed := false
	for _, o := range rules {
		if r.ID != 0 && o.ID == r.ID {
			o, placed = r, true
		}
		out = append(out, o)
	}
	if !placed {
		out = append(out, r)
	}
	return out
}

// sharedEvents warns, before the rule is saved, of each other enabled
// automatic rule that sends the same event to a destination of r's: both make
// the same event id for a lead, and a lead that matches both gets one
// event, owned by the first of the two in the rules order (see
// internal/decide). nil when r sends on no capture or is disabled.
func sharedEvents(r models.SendRule, rules []models.SendRule) []string {
	if !r.Enabled || !rule.Mode(r.Mode).OnCapture() {
		return nil
	}
	all := withRule(rules, r)
	var warnings []string
	thisFirst := false // r comes before the others met so far
	for _, o := range all {
		if o.ID == r.ID {
			thisFirst = true
			continue
		}
		if !o.Enabled || !rule.Mode(o.Mode).OnCapture() || !o.SharesDestination(r) || o.EventName != r.EventName {
			continue
		}
		owner := o.Name
		if thisFirst {
			owner = r.Name
			if owner == "" {
				owner = "this rule"
			}
		}
		warnings = append(warnings, fmt.Sprintf("Leads that match both this rule and %s get one %s event, owned by %s, "+
			"the first of the two in the rules order.", o.Name, r.EventName, owner))
	}
	return warnings
}
