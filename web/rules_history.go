package web

import (
	"slices"
	"strconv"
	"strings"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// ruleVersionsShown is how many changes a rule's page lists.
const ruleVersionsShown = 50

// ruleSettings lists a rule's settings as people read them, in the form's
// order: a version's before and after (store.RuleSnapshot).
func ruleSettings(r models.SendRule, datasets []models.Dataset) [][2]string {
	var names []string
	for _, id := range r.Destinations() {
		name := strconv.FormatInt(id, 10)
		if i := slices.IndexFunc(datasets, func(d models.Dataset) bool { return d.ID == id }); i >= 0 {
			name = destinationLabel(datasets[i])
		}
		names = append(names, name)
	}
	destinations := strings.Join(names, ", ")
	enabled := "no"
	if r.Enabled {
		enabled = "yes"
	}
	conditions := "conditions that cannot be read"
	if spec, problems := rule.SpecOf(r); len(problems) == 0 {
		conditions = spec.Text()
	}
	if conditions == "" {
		conditions = "none"
	}
	return [][2]string{{"Name", r.Name}, {"Destinations", destinations}, {"Send mode", modeOf(r.Mode).label}, {"Event name", r.EventName},
		{"Action source", rule.ActionSourceText(r)}, {"Value", rule.ValueText(r)}, {"Currency", rule.CurrencyText(r)}, {"Test event code", r.TestEventCode},
		{"Conditions", conditions}, {"Enabled", enabled}}
}

// ruleVersion shows one change of a rule: who, when, and each setting it
// changed, before and after.
func (h *Handler) ruleVersion(a models.Account, ver store.RuleVersion, datasets []models.Dataset) views.RuleVersion {
	out := views.RuleVersion{When: views.NewStamp(ver.CreatedAt, h.now(), location(a)), Who: ver.Email}
	switch {
	case ver.UserID == nil:
		out.Who = "setup file or leadsignal"
	case ver.Email == "":
		out.Who = "a removed user"
	}
	before, hasBefore := ver.BeforeRule()
	after, hasAfter := ver.AfterRule()
	switch {
	case !hasBefore && hasAfter:
		out.Kind = "created"
		for _, s := range ruleSettings(after, datasets) {
			if s[1] != "" {
				out.Changes = append(out.Changes, views.RuleChange{Setting: s[0], After: s[1]})
			}
		}
	case hasBefore && !hasAfter:
		out.Kind = "deleted"
	default:
		out.Kind = "changed"
		b, af := ruleSettings(before, datasets), ruleSettings(after, datasets)
		for i := range b {
			if b[i][1] != af[i][1] {
				out.Changes = append(out.Changes, views.RuleChange{Setting: b[i][0], Before: b[i][1], After: af[i][1]})
			}
		}
	}
	return out
}
