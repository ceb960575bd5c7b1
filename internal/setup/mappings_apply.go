package setup

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
)

// deleteMappings deletes the account's stage mappings that the file's
// clean list leaves out, but those named in keep (lower-case: the file's
// booking rules), and returns them for mappings to report.
func (a *applier) deleteMappings(ctx context.Context, accountID int64, specs []MappingSpec, keep map[string]bool) ([]models.SendRule, error) {
	cur, err := a.tx.SendRules(ctx, accountID)
	if err != nil {
		return nil, err
	}
	named := maps.Clone(keep)
	for _, m := range specs {
		named[strings.ToLower(m.Name)] = true
	}
	var gone []models.SendRule
	for _, r := range cur {
		if !isMapping(r) || named[strings.ToLower(r.Name)] {
			continue
		}
		if err := a.tx.DeleteSendRule(ctx, accountID, r.ID, a.by); err != nil {
			return nil, err
		}
		gone = append(gone, r)
	}
	return gone, nil
}

// mappings makes the account's stage mappings the file's list: before are
// the rules and mappings the account had when the apply began, gone the
// mappings deleteMappings deleted. A mapping is found by its name,
// ignoring case, among the account's mappings only; new ones are created,
// and all put in the order of their Order, after the send rules and the
// mappings the file's booking rules became (a.booking). A stage
// the account lacks is added to the end of its stages, in the order the
// file names them. Only what differs is written, so an unchanged mapping
// gets no new version.
func (a *applier) mappings(ctx context.Context, accountID int64, before, gone []models.SendRule, specs []MappingSpec) error {
	datasetID, datasetName, err := a.datasetNames(ctx, accountID)
	if err != nil {
		return err
	}
	existed := map[int64]bool{}
	for _, r := range before {
		existed[r.ID] = true
	}
	for _, r := range gone {
		if existed[r.ID] {
			a.change("stage_mappings", "deleted %q (%s)", r.Name, mappingSummary(r, datasetName))
			a.report.Summary.MappingsDeleted++
		}
	}
	stages, err := a.tx.Stages(ctx, accountID)
	if err != nil {
		return err
	}
	cur, err := a.tx.SendRules(ctx, accountID)
	if err != nil {
		return err
	}
	byName := map[string]models.SendRule{}
	var rules []int64 // the send rules, in order
	for _, r := range cur {
		if isMapping(r) {
			byName[strings.ToLower(r.Name)] = r
		} else {
			rules = append(rules, r.ID)
		}
	}

	ids := make([]int64, len(specs))
	for i, spec := range specs {
		path := fmt.Sprintf("stage_mappings[%d]", i)
		stage, err := a.stage(ctx, path+".stage", accountID, &stages, spec.Stage)
		if err != nil {
			return err
		}
		old, found := byName[strings.ToLower(spec.Name)]
		if !found {
			old = models.SendRule{AccountID: accountID}
		}
		want := mappingRuleOf(old, spec, destinationIDs(spec.Dataset, spec.Destinations, datasetID), stage)
		if err := a.saveRule(ctx, found, old, &want); err != nil {
			return err
		}
		if found && existed[old.ID] {
			if a.mappingChanges(path, destinationsKey(spec.Destinations), old, want, datasetName) {
				a.report.Summary.MappingsChanged++
			}
		} else {
			a.change(path, "created %q (%s)", want.Name, mappingSummary(want, datasetName))
			a.report.Summary.MappingsAdded++
		}
		ids[i] = want.ID
	}

	order := mappingOrder(specs)
	sorted := make([]int64, len(order))
	for k, i := range order {
		sorted[k] = ids[i]
	}
	a.reportMappingOrder(before, sorted)
	return a.tx.OrderSendRules(ctx, accountID, slices.Concat(rules, a.booking, sorted))
}

// datasetNames maps the account's datasets' lower-case names to their ids,
// and their ids to their names.
func (a *applier) datasetNames(ctx context.Context, accountID int64) (map[string]int64, map[int64]string, error) {
	datasets, err := a.tx.Datasets(ctx, accountID)
	if err != nil {
		return nil, nil, err
	}
	ids := map[string]int64{}
	names := map[int64]string{}
	for _, d := range datasets {
		ids[strings.ToLower(d.Name)] = d.ID
		names[d.ID] = d.Name
	}
	return ids, names, nil
}

// stage is the account's stage named like want, ignoring case, as the
// account spells it; a stage the account lacks is added at the end of
// *stages, and reported at path.
func (a *applier) stage(ctx context.Context, path string, accountID int64, stages *[]models.Stage, want string) (string, error) {
	for _, s := range *stages {
		if strings.EqualFold(s.Name, want) {
			return s.Name, nil
		}
	}
	st, err := a.tx.AppendStage(ctx, accountID, want)
	if err != nil {
		return "", err
	}
	if n := len(*stages); n > 0 {
		a.change(path, "added the stage %q to the account's stages, after %q", want, (*stages)[n-1].Name)
	} else {
		a.change(path, "added the stage %q to the account's stages", want)
	}
	*stages = append(*stages, st)
	a.report.Summary.StagesAdded++
	return st.Name, nil
}

// reportMappingOrder reports a new order of the mappings the account had
// before, when ids (the mappings in their new order) changes it.
func (a *applier) reportMappingOrder(before []models.SendRule, ids []int64) {
	place := map[int64]int{}
	for i, id := range ids {
		place[id] = i
	}
	var was []models.SendRule
	for _, r := range before {
		if _, ok := place[r.ID]; ok && isMapping(r) {
			was = append(was, r)
		}
	}
	now := slices.Clone(was)
	slices.SortStableFunc(now, func(x, y models.SendRule) int { return place[x.ID] - place[y.ID] })
	if !slices.EqualFunc(was, now, func(x, y models.SendRule) bool { return x.ID == y.ID }) {
		a.change("stage_mappings", "order %s → %s", ruleNames(was), ruleNames(now))
		a.report.Summary.MappingsReordered = true
	}
}

// mappingChanges reports how want differs from old, one change a
// setting, and whether it does; a change of destinations at key, the
// file's (dataset or destinations).
func (a *applier) mappingChanges(path, key string, old, want models.SendRule, datasetName map[int64]string) bool {
	n := len(a.report.Changes)
	a.set(path+".name", &old.Name, want.Name)
	a.set(path+".stage", &old.Stage, want.Stage)
	a.destinationChange(path+"."+key, old, want, datasetName)
	a.set(path+".event_name", &old.EventName, want.EventName)
	if old.Combinator != want.Combinator {
		a.change(path+".combinator", "%s → %s", show(old.Combinator), want.Combinator)
	}
	if oc, wc := conditionsOf(old), conditionsOf(want); oc.StoredConditions() != wc.StoredConditions() {
		a.change(path+".conditions", "%s → %s", conditionsText(oc), conditionsText(wc))
	}
	if from, to := mappingValueText(old), mappingValueText(want); from != to {
		a.change(path+".value", "%s → %s", from, to)
	}
	if from, to := mappingCurrencyText(old), mappingCurrencyText(want); from != to {
		a.change(path+".currency", "%s → %s", from, to)
	}
	if old.Repeatable != want.Repeatable {
		a.change(path+".repeatable", "%s → %s", repeatText(old.Repeatable), repeatText(want.Repeatable))
	}
	if old.Enabled != want.Enabled {
		a.change(path+".enabled", "%s → %s", enabledText(old.Enabled), enabledText(want.Enabled))
	}
	if old.ActionSource != want.ActionSource {
		a.change(path+".action_source", "%s → %s", rule.ActionSourceText(old), rule.ActionSourceText(want))
	}
	a.set(path+".test_event_code", &old.TestEventCode, want.TestEventCode)
	return len(a.report.Changes) > n
}

// mappingSummary says in a few words what a mapping sends: `stage won:
// Purchase to Main and TikTok, value from the stage change, repeatable`.
func mappingSummary(r models.SendRule, datasetName map[int64]string) string {
	s := fmt.Sprintf("stage %s: %s to %s", r.Stage, r.EventName, destinationsText(r, datasetName))
	if v := mappingValueText(r); v != "none" {
		s += ", value " + v
	}
	if n := conditionsOf(r).Count(); n > 0 {
		s += ", " + plural(n, "condition")
	}
	if r.Repeatable {
		s += ", repeatable"
	}
	if !r.Enabled {
		s += ", disabled"
	}
	return s
}

// mappingValueText says a mapping's value: as a rule's (rule.ValueText),
// or "from the stage change".
func mappingValueText(r models.SendRule) string {
	if r.ValueField == models.StageValueFromChange {
		return "from the stage change"
	}
	return rule.ValueText(r)
}

// mappingCurrencyText says a mapping's currency: as a rule's
// (rule.CurrencyText), or the stage change's.
func mappingCurrencyText(r models.SendRule) string {
	switch {
	case r.CurrencyField == models.StageValueFromChange:
		return "from the stage change"
	case r.CurrencyField == "" && r.Currency == "" && r.ValueField == models.StageValueFromChange:
		return "the stage change's, else the account's"
	}
	return rule.CurrencyText(r)
}

func repeatText(on bool) string {
	if on {
		return "every change"
	}
	return "once per lead"
}

// exportMappings lists the account's stage mappings rs (in order) as the
// file writes them, numbered from 1 in that order, with their
// destinations (byID: the account's).
func exportMappings(rs []models.SendRule, byID map[int64]models.Dataset) ([]MappingSpec, error) {
	out := []MappingSpec{}
	for _, r := range rs {
		if !isMapping(r) {
			continue
		}
		spec, problems := rule.SpecOf(r)
		if len(problems) > 0 {
			return nil, fmt.Errorf("stage mapping %q: %s", r.Name, problems[0])
		}
		out = append(out, mappingSpecOf(r, spec, byID, len(out)+1))
	}
	return out, nil
}
