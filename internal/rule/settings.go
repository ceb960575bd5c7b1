package rule

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/country"
	"github.com/leadsignal/leadsignal/models"
)

// MaxValue is the largest value an event may carry: no deal is worth more,
// and a typo such as 1e308 would otherwise reach Meta as a purchase.
const MaxValue = 1e12

// MaxTestEventCodeLen bounds a rule's test event code.
const MaxTestEventCodeLen = 100

// amountRE is an amount as people write it: digits, then maybe a decimal
// point and decimals. It leaves out what ParseFloat would also take (NaN,
// Inf, 1e308, 0x1p4, a sign).
var amountRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// Amount reads s (trimmed) as an event's value: a plain amount from 0 to
// MaxValue. "$250", "1,000", "-5" and "1e3" are not amounts. A stage's
// value, a rule's fixed value and a value a rule reads from a lead field
// are all read this way.
func Amount(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if !amountRE.MatchString(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && v <= MaxValue
}

// CheckRule checks a stored send rule whole: its Spec as Compile does, and
// what it sets beyond it (action_source, value, currency, test event
// code), and that a Purchase gets a value (PurchaseValueProblem).
// Problems carry the column's name as their path (action_source, value,
// value_field, currency, currency_field, test_event_code). The rule form
// and the setup file's send rules and stage mappings all check rules this
// way. A stage mapping (mode Stage) may take its value and currency from
// the stage change (models.StageValueFromChange).
func CheckRule(r models.SendRule, schema Schema) (*Matcher, []Problem) {
	m, problems := CompileRule(r, schema)
	add := func(path, format string, args ...any) {
		problems = append(problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if r.ActionSource != "" && !slices.Contains(capi.ActionSources, r.ActionSource) {
		add("action_source", "%q is not an action source; use one of %s (Meta's action sources), or leave it empty to take it from the lead's source",
			r.ActionSource, strings.Join(capi.ActionSources, ", "))
	}
	if r.Value != nil && !(*r.Value >= 0 && *r.Value <= MaxValue) { // NaN too
		add("value", "must be between 0 and %.0f", float64(MaxValue))
	}
	for _, f := range []struct{ path, name string }{{"value_field", r.ValueField}, {"currency_field", r.CurrencyField}} {
		// A stage mapping may take them from the stage change instead.
		if f.name != "" && !(Mode(r.Mode) == Stage && f.name == models.StageValueFromChange) {
			if msg := schema.ValueProblem(f.name); msg != "" {
				add(f.path, "%s", msg)
			}
		}
	}
	if msg := PurchaseValueProblem(r); msg != "" {
		add("value", "%s", msg)
	}
	if r.Currency != "" && !country.ValidCurrency(r.Currency) {
		add("currency", "%q is not an ISO 4217 code; write one like USD or EUR, in upper case", r.Currency)
	}
	if msg := TestEventCodeProblem(r.TestEventCode); msg != "" {
		add("test_event_code", "%s", msg)
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return m, nil
}

// PurchaseValueProblem says why rule r cannot send a Purchase as it is
// set, or "": Meta refuses a Purchase without a value, so a rule that
// sends one must give it a value, fixed, read from a lead field, or for a
// stage mapping taken from the stage change. Its currency needs no check:
// the rule's, a field's, the change's, or else the account's, which every
// account has.
func PurchaseValueProblem(r models.SendRule) string {
	if r.EventName != "Purchase" || r.Value != nil || r.ValueField != "" {
		return ""
	}
	if Mode(r.Mode) == Stage {
		return "a Purchase needs a value, and Meta refuses one without it: take it from the stage change (the deal's value), " +
			"read it from a lead field, or set a fixed one"
	}
	return "a Purchase needs a value, and Meta refuses one without it: read it from a lead field (like fields.deal_value) or set a fixed one"
}

// TestEventCodeProblem says what is wrong with a test event code (a
// rule's or a destination's), or "": at most MaxTestEventCodeLen
// characters of text, without spaces or control characters.
func TestEventCodeProblem(code string) string {
	switch {
	case len(code) > MaxTestEventCodeLen:
		return fmt.Sprintf("use at most %d characters", MaxTestEventCodeLen)
	case !utf8.ValidString(code) || strings.IndexFunc(code, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
		return "a test event code has no spaces, like TEST12345"
	}
	return ""
}
