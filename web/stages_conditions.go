package web

import (
	"crypto/rand"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/views"
)

// A stage mapping's conditions are the rule form's rows, with the stage
// change's fields (change.value, change.currency) first in the field
// select. A row is fetched again when its field changes, so that it
// offers the match types that field takes and a pattern input to match
// (a number for the deal value); the save checks them all the same.

// mappingChoices are the mapping form's choices: the rule form's, with
// the stage change's fields first.
func mappingChoices(env ruleEnv) views.RuleChoices {
	ch := env.choices()
	g := views.OptionGroup{Label: "Stage change"}
	for _, f := range rule.ChangeFields() {
		g.Options = append(g.Options, views.Option{Value: f.Name, Label: f.Label})
	}
	ch.Fields = append([]views.OptionGroup{g}, ch.Fields...)
	ch.RowURL = views.AccountURL(env.account.ID, "/rules/condition-row?form=mapping")
	ch.GroupURL = views.AccountURL(env.account.ID, "/rules/condition-group?form=mapping")
	return ch
}

// mappingField is the field a mapping's condition names: one of the stage
// change's, a lead's, or a custom form field (fields.<name>, seen lately
// or not); false for none of them.
func mappingField(schema rule.Schema, name string) (rule.Field, bool) {
	for _, f := range append(rule.ChangeFields(), schema.Fields()...) {
		if f.Name == name {
			return f, true
		}
	}
	if custom, ok := strings.CutPrefix(name, rule.CustomPrefix); ok && strings.TrimSpace(custom) != "" {
		return rule.Field{Name: name, Label: name, Kind: rule.Text}, true
	}
	return rule.Field{}, false
}

// fitRow offers condition row c the match types of its field, and a
// pattern input that suits it. A match type the field does not take stays
// offered while it is typed, so that its error shows beside it.
func fitRow(c *views.RuleCondition, schema rule.Schema) {
	f, ok := mappingField(schema, c.Field)
	if !ok {
		return // no field chosen yet: every match type
	}
	for _, t := range f.MatchTypes() {
		c.MatchTypes = append(c.MatchTypes, views.Option{Value: string(t), Label: matchTypeLabels[t]})
	}
	if label, known := matchTypeLabels[rule.MatchType(c.MatchType)]; known && !slices.Contains(f.MatchTypes(), rule.MatchType(c.MatchType)) {
		c.MatchTypes = append(c.MatchTypes, views.Option{Value: c.MatchType, Label: label})
	}
	switch {
	case f.Kind == rule.Number:
		c.InputMode, c.Placeholder = "decimal", "a number, like 500"
	case f.Kind == rule.Bool:
		c.Placeholder = "true or false"
	case f.Name == rule.ChangePrefix+"currency":
		c.Placeholder = "a code like EUR, or a list: EUR, CHF"
	}
}

// mappingConditionRow answers the mapping form's "Add condition" with a
// new row, and a row whose field changed with the row again, fitted to
// the field: its match type kept when the field takes it, else the
// field's first, and its pattern kept. It serves the rule form's row
// path with form=mapping (ruleConditionRow): one path for condition rows.
func (h *Handler) mappingConditionRow(c echo.Context) error {
	env, err := h.ruleEnv(c.Request().Context(), currentAccount(c).Account, 0)
	if err != nil {
		return err
	}
	row := views.RuleCondition{Key: strings.ToLower(rand.Text()[:8]), Group: groupKey(c.QueryParam("cond_group")), Field: c.QueryParam("cond_field"),
		MatchType: c.QueryParam("cond_match_type"), Pattern: c.QueryParam("cond_pattern")}
	if row.MatchType == "" {
		row.MatchType = string(rule.Equals)
	}
	if f, ok := mappingField(env.schema, row.Field); ok && !slices.Contains(f.MatchTypes(), rule.MatchType(row.MatchType)) {
		row.MatchType = string(f.MatchTypes()[0])
	}
	fitRow(&row, env.schema)
	return render(c, http.StatusOK, views.RuleConditionRow(fragmentPage(c), mappingChoices(env), row))
}
