package setup

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
)

// MappingSpec is one stage mapping of the account: when a lead reaches
// Stage (one of the account's CRM stages), send EventName to Dataset, or
// to each of Destinations. It is stored as a send rule of mode stage, and
// found by its name, ignoring case; a mapping without a name is named
// DefaultMappingName.
type MappingSpec struct {
	// Name is the mapping's name, unique among the account's send rules
	// and stage mappings; empty means DefaultMappingName.
	Name    string `json:"name,omitempty"`
	Stage   string `json:"stage"`
	Dataset string `json:"dataset,omitempty"`
	// Destinations, when present (not nil), are the mapping's
	// destinations in order, instead of Dataset.
	Destinations []string `json:"destinations,omitempty"`
	EventName    string   `json:"event_name"`
	// Order places the mapping among the account's stage mappings, from
	// 1: they take the order of their Order, and mappings with equal
	// orders the list's. 0 (none given) is the mapping's place in the
	// list, counting from 1.
	Order int `json:"order,omitempty"`
	// Combinator joins the conditions and groups; empty means and.
	Combinator rule.Combinator  `json:"combinator"`
	Conditions []rule.Condition `json:"conditions"`
	// Groups are as a send rule's.
	Groups []rule.Group `json:"groups,omitempty"`
	// Value and Currency are nil when the mapping sets none (no value;
	// the stage change's currency when the value is the change's, else
	// the account's). FromChange takes the stage change's own.
	Value    *ValueSpec    `json:"value,omitempty"`
	Currency *CurrencySpec `json:"currency,omitempty"`
	// Repeatable sends one event per stage change (a second sale to the
	// same lead), not one per lead and stage.
	Repeatable bool `json:"repeatable"`
	// ActionSource and TestEventCode are as a send rule's: the mapping
	// a booking rule became may have them (migration 0019).
	ActionSource  string `json:"action_source,omitempty"`
	TestEventCode string `json:"test_event_code,omitempty"`
	// Enabled is true unless the file says false.
	Enabled bool `json:"enabled"`
	// defaultName is true when clean named the mapping
	// DefaultMappingName.
	defaultName bool
}

// DefaultMappingName is the name of a stage mapping the file gives none:
// "<stage> to <event name>" ("won to Purchase"), cut to name.MaxLen
// characters, ending in "…", so that it is always a name.
func DefaultMappingName(stage, eventName string) string {
	n := stage + " to " + eventName
	if utf8.RuneCountInString(n) > name.MaxLen {
		n = string([]rune(n)[:name.MaxLen-1]) + "…"
	}
	return n
}

// RuleName is the name the mapping has among the account's send rules:
// its Name, else DefaultMappingName.
func (m MappingSpec) RuleName() string {
	if n := strings.TrimSpace(m.Name); n != "" {
		return n
	}
	return DefaultMappingName(strings.TrimSpace(m.Stage), strings.TrimSpace(m.EventName))
}

// isMapping reports whether a stored send rule is a stage mapping.
func isMapping(r models.SendRule) bool { return rule.Mode(r.Mode) == rule.Stage }

// maxMappings bounds the stage mappings of one file, as maxRules bounds
// its send rules.
const maxMappings = 200

// maxOrder bounds a mapping's order.
const maxOrder = 10000

func (d *decoder) mappings(path string, raw json.RawMessage) []MappingSpec {
	if isNull(raw) {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		d.add(path, "must be a list of stage mappings, not "+kind(raw))
		return nil
	}
	if len(items) > maxMappings {
		d.add(path, fmt.Sprintf("use at most %d stage mappings, not %d", maxMappings, len(items)))
		return nil
	}
	out := make([]MappingSpec, len(items))
	for i, item := range items {
		m := &out[i]
		p := fmt.Sprintf("%s[%d]", path, i)
		var conditions, groups, dests []json.RawMessage
		var value, currency json.RawMessage
		var enabled *bool
		var order json.RawMessage
		d.fields(p, item, `must be an object like {"stage": "won", "dataset": "Main", "event_name": "Purchase", "value": "from_change"}`, []field{
			{"name", &m.Name, "a string"},
			{"stage", &m.Stage, "a string: a CRM stage, like won"},
			{"dataset", &m.Dataset, "a string: the name of a dataset"},
			{"destinations", &dests, destinationsWant},
			{"event_name", &m.EventName, "a string like QualifiedLead or Purchase"},
			{"order", &order, "a whole number from 1: the mapping's place among the stage mappings"},
			{"combinator", &m.Combinator, "a string: and or or"},
			{"conditions", &conditions, "a list of conditions"},
			{"groups", &groups, `a list of groups like {"combinator": "or", "conditions": [...]}`},
			{"value", &value, "a number"},
			{"currency", &currency, "a string"},
			{"repeatable", &m.Repeatable, "true or false"},
			{"action_source", &m.ActionSource, "a string like system_generated"},
			{"test_event_code", &m.TestEventCode, "a string"},
			{"enabled", &enabled, "true or false"},
		})
		m.Enabled = enabled == nil || *enabled
		m.Destinations = d.destinationNames(join(p, "destinations"), dests)
		m.Order = d.order(join(p, "order"), order)
		m.Conditions = d.conditions(join(p, "conditions"), conditions)
		m.Groups = d.groups(join(p, "groups"), groups)
		m.Value = d.value(join(p, "value"), value, true)
		m.Currency = d.currency(join(p, "currency"), currency, true)
	}
	return out
}

// order reads a mapping's order: absent or null for none (0), else a
// whole number from 1.
func (d *decoder) order(path string, raw json.RawMessage) int {
	if raw == nil || isNull(raw) {
		return 0
	}
	const want = "must be a whole number from 1: the mapping's place among the stage mappings"
	var n int
	switch err := json.Unmarshal(raw, &n); {
	case err != nil && kind(raw) != "a number":
		d.add(path, want+", not "+kind(raw))
	case err != nil || n < 1:
		d.add(path, want)
	}
	return n
}

// cleanMappings trims the mappings' strings and fills in their defaults
// (combinator and, a name, an order), as clean does the send rules'.
func cleanMappings(ms []MappingSpec) []MappingSpec {
	if ms == nil {
		return nil
	}
	t := strings.TrimSpace
	out := make([]MappingSpec, len(ms))
	for i, m := range ms {
		m.Name, m.Stage, m.Dataset, m.EventName = t(m.Name), t(m.Stage), t(m.Dataset), t(m.EventName)
		m.Destinations = cleanNames(m.Destinations)
		m.ActionSource, m.TestEventCode = t(m.ActionSource), t(m.TestEventCode)
		m.Combinator = rule.Combinator(t(string(m.Combinator)))
		if m.Combinator == "" {
			m.Combinator = rule.And
		}
		if m.Name == "" {
			m.Name, m.defaultName = DefaultMappingName(m.Stage, m.EventName), true
		}
		if m.Order == 0 {
			m.Order = i + 1
		}
		m.Conditions, m.Groups = cleanConditions(m.Conditions), cleanGroups(m.Groups)
		m.Value, m.Currency = cleanValue(m.Value), cleanCurrency(m.Currency)
		out[i] = m
	}
	return out
}

// cleanConditions trims the conditions' fields and match types. Patterns
// are kept as written: a regular expression may mean its spaces.
func cleanConditions(cs []rule.Condition) []rule.Condition {
	out := make([]rule.Condition, len(cs))
	for j, c := range cs {
		out[j] = rule.Condition{Field: strings.TrimSpace(c.Field), MatchType: rule.MatchType(strings.TrimSpace(string(c.MatchType))), Pattern: c.Pattern}
	}
	return out
}

// cleanGroups cleans each group's conditions, and its combinator as a
// rule's: trimmed, and "and" when empty.
func cleanGroups(gs []rule.Group) []rule.Group {
	if gs == nil {
		return nil
	}
	out := make([]rule.Group, len(gs))
	for i, g := range gs {
		out[i] = rule.Group{Combinator: rule.Combinator(strings.TrimSpace(string(g.Combinator))), Conditions: cleanConditions(g.Conditions)}
		if out[i].Combinator == "" {
			out[i].Combinator = rule.And
		}
	}
	return out
}

// mappingOrder lists the indexes of clean mappings in the order they
// take: by Order, equal orders in the list's order.
func mappingOrder(ms []MappingSpec) []int {
	idx := make([]int, len(ms))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int { return ms[x].Order - ms[y].Order })
	return idx
}

// mappingRuleOf is the stored rule old as the clean mapping spec wants
// it, to the destinations ids (destinationIDs), for the account's stage
// stage. Conditions equal to old's keep their stored JSON, so that an
// unchanged mapping compares equal. The file is the whole mapping: what it
// leaves out (an action source, a test event code) is cleared.
func mappingRuleOf(old models.SendRule, spec MappingSpec, ids []int64, stage string) models.SendRule {
	r := old
	r.SetDestinations(ids)
	r.Name, r.Mode, r.EventName, r.Stage = spec.Name, string(rule.Stage), spec.EventName, stage
	r.ActionSource, r.TestEventCode, r.Combinator = spec.ActionSource, spec.TestEventCode, string(spec.Combinator)
	r.Repeatable, r.Enabled = spec.Repeatable, spec.Enabled
	setValue(&r, spec.Value, spec.Currency)
	setConditions(&r, old, spec.Conditions, spec.Groups)
	return r
}

// setConditions sets r's conditions to cs and gs, keeping old's stored
// JSON when they are equal.
func setConditions(r *models.SendRule, old models.SendRule, cs []rule.Condition, gs []rule.Group) {
	stored := rule.Spec{Conditions: cs, Groups: gs}.StoredConditions()
	if conditionsOf(old).StoredConditions() == stored && old.Conditions != "" {
		return
	}
	r.Conditions = stored
}

// mappingSpecOf is a stored stage mapping as the file writes it, at
// place order among the mappings, with its destinations (destinationsOf;
// byID: the account's). A name that is the default is left out.
func mappingSpecOf(r models.SendRule, spec rule.Spec, byID map[int64]models.Dataset, order int) MappingSpec {
	dataset, dests := destinationsOf(r, byID)
	out := MappingSpec{
		Name: r.Name, Stage: r.Stage, Dataset: dataset, Destinations: dests, EventName: r.EventName, Order: order,
		Combinator: spec.Combinator, Conditions: spec.Conditions, Groups: spec.Groups, Repeatable: r.Repeatable, Enabled: r.Enabled,
		ActionSource: r.ActionSource, TestEventCode: r.TestEventCode,
	}
	if out.Name == DefaultMappingName(r.Stage, r.EventName) {
		out.Name = ""
	}
	if out.Combinator == "" {
		out.Combinator = rule.And
	}
	if out.Conditions == nil {
		out.Conditions = []rule.Condition{}
	}
	out.Value, out.Currency = valueSpecOf(r), currencySpecOf(r)
	return out
}

// mappingProblems lists the problems of the clean file's stage mappings,
// with the send rules' names (firstRule, by lower-case name) that theirs
// must differ from, and what the database knows of the account (k, nil
// when nothing). It returns the mappings as stored rules, for the cost.
func (f File) mappingProblems(refs *datasetRefs, firstRule map[string]int, k *known) ([]Problem, []models.SendRule) {
	var ps []Problem
	add := func(path, format string, args ...any) {
		ps = append(ps, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	first := map[string]int{}
	rules := make([]models.SendRule, len(f.StageMappings))
	for i, m := range f.StageMappings {
		p := fmt.Sprintf("stage_mappings[%d]", i)
		hint := ""
		if m.defaultName {
			hint = `: give this mapping a "name"`
		}
		l := strings.ToLower(m.Name)
		ruleAt, inRules := firstRule[l]
		mappingAt, dup := first[l]
		switch msg := name.Problem(m.Name); {
		case msg != "":
			// A default name's problems are its stage's and event name's.
			if !m.defaultName {
				add(p+".name", "%s", msg)
			}
		case inRules:
			add(p+".name", "%q is also the name of send_rules[%d]; send rules and stage mappings share their names, which must differ (ignoring case)%s", m.Name, ruleAt, hint)
		case dup:
			add(p+".name", "%q is also the name of stage_mappings[%d]; mapping names must differ (ignoring case)%s", m.Name, mappingAt, hint)
		default:
			first[l] = i
			if r, ok := k.rule(m.Name); ok && f.SendRules == nil && !isMapping(r) {
				add(p+".name", "%q is the name of a send rule of the account, which the file leaves as it is (it has no send_rules); "+
					"send rules and stage mappings share their names, which must differ (ignoring case)%s", m.Name, hint)
			}
		}
		if msg := stageProblem(m.Stage); msg != "" {
			add(p+".stage", "%s", msg)
		}
		ps = append(ps, refs.destinationProblems(p, m.Dataset, m.Destinations)...)
		if m.Order < 1 || m.Order > maxOrder {
			add(p+".order", "must be a whole number from 1 to %d: the mapping's place among the stage mappings", maxOrder)
		}
		// Checked as the Stages page checks a mapping, by the package
		// whose matcher runs it.
		rules[i] = mappingRuleOf(models.SendRule{}, m, nil, m.Stage)
		_, rps := rule.CheckRule(rules[i], ruleSchema)
		for _, rp := range rps {
			add(p+"."+filePath(rp.Path), "%s", rp.Message)
		}
	}
	return ps, rules
}

// stageProblem says what is wrong with a mapping's stage, or "": a CRM
// stage is named like the stage API's (a name, not junk or not_junk).
func stageProblem(stage string) string { return name.StageProblem(stage) }

// filePath is the file's path of a problem rule.CheckRule reports at a
// column: the file names the field a value or currency is read from
// inside that key.
func filePath(column string) string {
	switch column {
	case "value_field":
		return "value.field"
	case "currency_field":
		return "currency.field"
	}
	return column
}
