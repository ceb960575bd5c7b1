package web

import (
	"encoding/json"
	"strconv"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// ruleVersionsShown is how many changes a rule's page lists.
const ruleVersionsShown = 50

// versionRule is what a version keeps of a rule (store's ruleJSON).
type versionRule struct {
	Name          string           `json:"name"`
	DatasetID     int64            `json:"dataset_id"`
	Mode          string           `json:"mode"`
	EventName     string           `json:"event_name"`
	ActionSource  string           `json:"action_source"`
	Value         *float64         `json:"value"`
	ValueField    string           `json:"value_field"`
	Currency      string           `json:"currency"`
	CurrencyField string           `json:"currency_field"`
	TestEventCode string           `json:"test_event_code"`
	Combinator    string           `json:"combinator"`
	Conditions    []rule.Condition `json:"conditions"`
	Enabled       bool             `json:"enabled"`
}

// settings lists the version's settings as people read them, in the
// form's order.
func (v versionRule) settings(datasets []models.Dataset) [][2]string {
	dataset := strconv.FormatInt(v.DatasetID, 10)
	for _, d := range datasets {
		if d.ID == v.DatasetID {
			dataset = d.Name
		}
	}
	// What the words need of the rule, as it was.
	r := models.SendRule{ActionSource: v.ActionSource, Value: v.Value, ValueField: v.ValueField, Currency: v.Currency, CurrencyField: v.CurrencyField}
	enabled := "no"
	if v.Enabled {
		enabled = "yes"
	}
	conditions := rule.ConditionsText(rule.Combinator(v.Combinator), v.Conditions)
	if conditions == "" {
		conditions = "none"
	}
	return [][2]string{{"Name", v.Name}, {"Dataset", dataset}, {"Send mode", modeLabel(v.Mode)}, {"Event name", v.EventName},
		{"Action source", rule.ActionSourceText(r)}, {"Value", rule.ValueText(r)}, {"Currency", rule.CurrencyText(r)}, {"Test event code", v.TestEventCode},
		{"Conditions", conditions}, {"Enabled", enabled}}
}

// ruleVersion shows one change of a rule: who, when, and each setting it
// changed, before and after.
func (h *Handler) ruleVersion(a models.Account, ver store.RuleVersion, datasets []models.Dataset) views.RuleVersion {
	out := views.RuleVersion{When: h.formatTime(a, &ver.CreatedAt), Who: ver.Email}
	switch {
	case ver.UserID == nil:
		out.Who = "setup file or leadsignal"
	case ver.Email == "":
		out.Who = "a removed user"
	}
	var before, after versionRule
	hasBefore := ver.Before != "" && json.Unmarshal([]byte(ver.Before), &before) == nil
	hasAfter := ver.After != "" && json.Unmarshal([]byte(ver.After), &after) == nil
	switch {
	case !hasBefore && hasAfter:
		out.Kind = "created"
		for _, s := range after.settings(datasets) {
			if s[1] != "" {
				out.Changes = append(out.Changes, views.RuleChange{Setting: s[0], After: s[1]})
			}
		}
	case hasBefore && !hasAfter:
		out.Kind = "deleted"
	default:
		out.Kind = "changed"
		b, af := before.settings(datasets), after.settings(datasets)
		for i := range b {
			if b[i][1] != af[i][1] {
				out.Changes = append(out.Changes, views.RuleChange{Setting: b[i][0], Before: b[i][1], After: af[i][1]})
			}
		}
	}
	return out
}
