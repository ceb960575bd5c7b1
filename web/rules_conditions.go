package web

import (
	"crypto/rand"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/views"
)

// A condition row of the rule form offers what its field takes: a yes/no
// picker for a true/false field, a number input and comparisons for a
// number, a list input for "is one of", text matches for text. The row is
// fetched again when its field or match type changes (ruleConditionRow);
// the save checks every row all the same (rule.CheckRule), for requests
// made by hand too.

// Pattern inputs of a condition row (views.RuleCondition.Input).
const (
	inputText   = "text"
	inputNumber = "number"
	inputYesNo  = "yesno"
	inputList   = "list"
	inputNone   = "none"
)

// fitCondition offers row the match types of its field f (known false:
// no field chosen yet, or one the account does not have), named for the
// field's kind, and the pattern input that suits the field and the match
// type. A match type or a pattern the field does not take stays as it
// was typed, so that its error shows beside it.
func fitCondition(row *views.RuleCondition, f rule.Field, known bool) {
	t := rule.MatchType(row.MatchType)
	types := rule.MatchTypes
	if known {
		types = f.MatchTypes()
	}
	row.MatchTypes = nil
	for _, mt := range types {
		row.MatchTypes = append(row.MatchTypes, views.Option{Value: string(mt), Label: mt.Label(f.Kind)})
	}
	if slices.Contains(rule.MatchTypes, t) && !slices.Contains(types, t) {
		row.MatchTypes = append(row.MatchTypes, views.Option{Value: string(t), Label: t.Label(f.Kind)})
	}
	pattern := strings.TrimSpace(row.Pattern)
	row.Input, row.InputMode, row.Placeholder, row.Hint = inputText, "", "", ""
	switch {
	case !t.TakesPattern() && pattern == "":
		row.Input = inputNone
	case f.Kind == rule.Bool && (t == rule.Equals || t == rule.NotEquals) && isYesNo(pattern):
		row.Input, row.Pattern = inputYesNo, strings.ToLower(pattern)
	case t == rule.InList || t == rule.NotInList:
		row.Input, row.Placeholder, row.Hint = inputList, "Berlin, Hamburg", "One value per line, or separated by commas."
	case t.Numeric() || f.Kind == rule.Number:
		row.InputMode, row.Placeholder = "decimal", "like 3"
		if _, err := strconv.ParseFloat(pattern, 64); err == nil || pattern == "" {
			row.Input = inputNumber
		}
	case t == rule.Regex:
		row.Placeholder, row.Hint = "^(info|sales)@", "A regular expression; upper and lower case match alike."
	case len(f.Values) > 0:
		row.Placeholder, row.Hint = f.Values[0], "One of: "+strings.Join(f.Values, ", ")+"."
	default:
		row.Placeholder = "a value"
	}
}

// isYesNo reports whether p is a yes/no picker's value, or none yet.
func isYesNo(p string) bool {
	p = strings.ToLower(p)
	return p == "" || p == "true" || p == "false"
}

// groupKey is the group key a row request names, when it can be one (at
// most 16 lower-case letters and digits, as the form makes them); "" (the
// rule's own conditions) otherwise. It lands in an id and a CSS selector.
func groupKey(k string) string {
	if k == "" || len(k) > 16 || strings.Trim(k, "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
		return ""
	}
	return k
}

// ruleConditionGroup answers the form's "Add group" with a new group, its
// conditions joined by OR (what a group is mostly for), with one empty
// row. The stage mapping form's (form=mapping) offers the stage change's
// fields too.
func (h *Handler) ruleConditionGroup(c echo.Context) error {
	env, err := h.ruleEnv(c.Request().Context(), currentAccount(c).Account, 0)
	if err != nil {
		return err
	}
	key := strings.ToLower(rand.Text()[:8])
	row := views.RuleCondition{Key: key + "c0", Group: key, MatchType: string(rule.Equals)}
	ch := env.ruleChoices()
	if c.QueryParam("form") == "mapping" {
		ch = mappingChoices(env)
		fitRow(&row, env.schema)
	} else {
		fitCondition(&row, rule.Field{}, false)
	}
	c.Response().Header().Set("HX-Trigger-After-Swap", "rule-changed")
	return render(c, http.StatusOK, views.RuleGroupView(fragmentPage(c), ch, views.RuleGroup{Key: key, Combinator: string(rule.Or),
		Conditions: []views.RuleCondition{row}}))
}

// ruleConditionRow answers the form's "Add condition" with a new empty
// row; a row whose field or match type changed (its inputs in the query)
// with the row again, fitted to its field: its match type kept when the
// field takes it, else the field's first, and its pattern kept when it
// suits them; and its remove buttons (remove=1) with nothing. After each,
// the preview counts again (HX-Trigger-After-Swap: rule-changed). The
// stage mapping form's rows (form=mapping) are mappingConditionRow's.
func (h *Handler) ruleConditionRow(c echo.Context) error {
	if c.QueryParam("remove") != "" {
		c.Response().Header().Set("HX-Trigger-After-Swap", "rule-changed")
		return c.HTML(http.StatusOK, "")
	}
	if c.QueryParam("form") == "mapping" {
		return h.mappingConditionRow(c)
	}
	env, err := h.ruleEnv(c.Request().Context(), currentAccount(c).Account, 0)
	if err != nil {
		return err
	}
	cd := rule.Condition{Field: c.QueryParam("cond_field"), MatchType: rule.MatchType(c.QueryParam("cond_match_type")),
		Pattern: c.QueryParam("cond_pattern")}
	if cd.MatchType == "" {
		cd.MatchType = rule.Equals
	}
	if f, ok := env.schema.Field(cd.Field); ok {
		if !slices.Contains(f.MatchTypes(), cd.MatchType) {
			cd.MatchType = f.MatchTypes()[0]
		}
		// A value typed for the field before stays when it suits this one.
		p := strings.TrimSpace(cd.Pattern)
		_, numErr := strconv.ParseFloat(p, 64)
		switch {
		case !cd.MatchType.TakesPattern():
			cd.Pattern = ""
		case f.Kind == rule.Bool && p != "true" && p != "false":
			cd.Pattern = "true" // the picker's first choice
		case f.Kind != rule.Bool && (p == "true" || p == "false"):
			cd.Pattern = ""
		case cd.MatchType.Numeric() && numErr != nil:
			cd.Pattern = ""
		}
	}
	c.Response().Header().Set("HX-Trigger-After-Swap", "rule-changed")
	row := views.RuleCondition{Key: strings.ToLower(rand.Text()[:8]), Group: groupKey(c.QueryParam("cond_group")), Field: cd.Field,
		MatchType: string(cd.MatchType), Pattern: cd.Pattern}
	f, known := env.schema.Field(cd.Field)
	fitCondition(&row, f, known)
	return render(c, http.StatusOK, views.RuleConditionRow(fragmentPage(c), env.ruleChoices(), row))
}
