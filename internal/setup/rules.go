package setup

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
)

// rules makes the account's send rules the file's list: before are the
// rules the account had when the apply began. A rule is found by its name,
// ignoring case; the others are deleted, new ones created, and all put in
// the file's order. Only what differs is written, so an unchanged rule
// gets no new version. A default rule that a dataset created by this
// apply brought is the file's to keep or drop, reported only when kept.
// Stage mappings are not send rules here: they are stage_mappings' to
// keep or delete (mappings), and follow the send rules in order. A booking
// rule is applied as the stage mapping it became (bookingMapping), in the
// rules' order.
func (a *applier) rules(ctx context.Context, accountID int64, before []models.SendRule, specs []RuleSpec) error {
	datasetID, datasetName, err := a.datasetNames(ctx, accountID)
	if err != nil {
		return err
	}
	existed := map[int64]bool{}
	for _, r := range before {
		existed[r.ID] = true
	}
	cur, err := a.tx.SendRules(ctx, accountID)
	if err != nil {
		return err
	}
	mappings := map[string]models.SendRule{}
	for _, r := range cur {
		if isMapping(r) {
			mappings[strings.ToLower(r.Name)] = r
		}
	}
	cur = slices.DeleteFunc(cur, isMapping)
	byName := map[string]models.SendRule{}
	for _, r := range cur {
		byName[strings.ToLower(r.Name)] = r
	}
	kept := map[int64]bool{}
	for _, spec := range specs {
		if r, ok := byName[strings.ToLower(spec.Name)]; ok && !spec.isBooking() {
			kept[r.ID] = true
		}
	}

	// Deleted first, so that no name is taken twice on the way.
	for _, r := range cur {
		if kept[r.ID] {
			continue
		}
		if err := a.tx.DeleteSendRule(ctx, accountID, r.ID, a.by); err != nil {
			return err
		}
		if existed[r.ID] {
			a.change("send_rules", "deleted %q (%s)", r.Name, ruleSummary(r, datasetName))
			a.report.Summary.RulesDeleted++
		}
	}

	order := make([]int64, len(specs))
	for i, spec := range specs {
		path := fmt.Sprintf("send_rules[%d]", i)
		if spec.isBooking() {
			if order[i], err = a.bookingMapping(ctx, accountID, path, spec, mappings, existed, datasetID, datasetName); err != nil {
				return err
			}
			continue
		}
		old, found := byName[strings.ToLower(spec.Name)]
		if !found {
			old = models.SendRule{AccountID: accountID}
		}
		want := ruleOf(old, spec, destinationIDs(spec.Dataset, spec.Destinations, datasetID))
		if err := a.saveRule(ctx, found, old, &want); err != nil {
			return err
		}
		if found && existed[old.ID] {
			if a.ruleChanges(path, destinationsKey(spec.Destinations), old, want, datasetName) {
				a.report.Summary.RulesChanged++
			}
		} else {
			a.change(path, "created %q (%s)", want.Name, ruleSummary(want, datasetName))
			a.report.Summary.RulesAdded++
		}
		order[i] = want.ID
	}
	return a.order(ctx, accountID, before, order)
}

// ruleOf is the stored rule old as spec wants it, to the destinations ids
// (destinationIDs). Conditions equal to old's keep their stored JSON, so
// that an unchanged rule compares equal.
func ruleOf(old models.SendRule, spec RuleSpec, ids []int64) models.SendRule {
	r := old
	r.SetDestinations(ids)
	r.Name, r.Mode, r.EventName = spec.Name, string(spec.Mode), spec.EventName
	r.ActionSource, r.TestEventCode, r.Combinator, r.Enabled = spec.ActionSource, spec.TestEventCode, string(spec.Combinator), spec.Enabled
	setValue(&r, spec.Value, spec.Currency)
	setConditions(&r, old, spec.Conditions, spec.Groups)
	return r
}

// conditionsOf reads a stored rule's conditions and groups; unreadable
// ones read as none, which no file asks for when the rule has any.
func conditionsOf(r models.SendRule) rule.Spec {
	s, _ := rule.SpecOf(r)
	return rule.Spec{Combinator: rule.Combinator(r.Combinator), Conditions: s.Conditions, Groups: s.Groups}
}

// saveRule stores want, a rule or mapping of the file, over old, the
// account's of the same name: created when it had none (found false),
// saved when it differs, left alone when it is the same.
func (a *applier) saveRule(ctx context.Context, found bool, old models.SendRule, want *models.SendRule) error {
	switch {
	case !found:
		return a.tx.CreateSendRule(ctx, want, a.by)
	case !reflect.DeepEqual(old, *want):
		return a.tx.SaveSendRule(ctx, want, a.by)
	}
	return nil
}

// ruleChanges reports how want differs from old, one change a setting,
// and whether it does; a change of destinations at key, the file's
// (dataset or destinations).
func (a *applier) ruleChanges(path, key string, old, want models.SendRule, datasetName map[int64]string) bool {
	n := len(a.report.Changes)
	a.set(path+".name", &old.Name, want.Name)
	a.destinationChange(path+"."+key, old, want, datasetName)
	a.set(path+".mode", &old.Mode, want.Mode)
	a.set(path+".event_name", &old.EventName, want.EventName)
	if old.ActionSource != want.ActionSource {
		a.change(path+".action_source", "%s → %s", rule.ActionSourceText(old), rule.ActionSourceText(want))
	}
	if old.Combinator != want.Combinator {
		a.change(path+".combinator", "%s → %s", show(old.Combinator), want.Combinator)
	}
	if oc, wc := conditionsOf(old), conditionsOf(want); oc.StoredConditions() != wc.StoredConditions() {
		a.change(path+".conditions", "%s → %s", conditionsText(oc), conditionsText(wc))
	}
	if from, to := rule.ValueText(old), rule.ValueText(want); from != to {
		a.change(path+".value", "%s → %s", from, to)
	}
	if from, to := rule.CurrencyText(old), rule.CurrencyText(want); from != to {
		a.change(path+".currency", "%s → %s", from, to)
	}
	a.set(path+".test_event_code", &old.TestEventCode, want.TestEventCode)
	if old.Enabled != want.Enabled {
		a.change(path+".enabled", "%s → %s", enabledText(old.Enabled), enabledText(want.Enabled))
	}
	return len(a.report.Changes) > n
}

// order puts the account's rules in the order of ids (every rule the
// account has), reporting a new order of the rules it had before. The
// store writes the whole order at once: moving rules one place at a time,
// as the Rules page does, would take a number of moves that grows with
// the square of the rules.
func (a *applier) order(ctx context.Context, accountID int64, before []models.SendRule, ids []int64) error {
	place := map[int64]int{}
	for i, id := range ids {
		place[id] = i
	}
	var was, now []models.SendRule
	for _, r := range before {
		if _, ok := place[r.ID]; ok {
			was = append(was, r)
		}
	}
	now = slices.Clone(was)
	slices.SortStableFunc(now, func(x, y models.SendRule) int { return place[x.ID] - place[y.ID] })
	if !slices.EqualFunc(was, now, func(x, y models.SendRule) bool { return x.ID == y.ID }) {
		a.change("send_rules", "order %s → %s", ruleNames(was), ruleNames(now))
		a.report.Summary.RulesReordered = true
	}
	return a.tx.OrderSendRules(ctx, accountID, ids)
}

func ruleNames(rs []models.SendRule) string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = strconv.Quote(r.Name)
	}
	return strings.Join(names, ", ")
}

// ruleSummary says in a few words what a rule sends: `QualifiedLead to
// Main, automatic_match, 2 conditions`, or `Lead to Main and TikTok,
// automatic_completed`.
func ruleSummary(r models.SendRule, datasetName map[int64]string) string {
	s := fmt.Sprintf("%s to %s, %s", r.EventName, destinationsText(r, datasetName), r.Mode)
	if n := conditionsOf(r).Count(); n > 0 {
		s += ", " + plural(n, "condition")
	}
	if !r.Enabled {
		s += ", disabled"
	}
	return s
}

// conditionsText says a rule's conditions and groups in words; "none"
// for none.
func conditionsText(s rule.Spec) string {
	if s.Count() == 0 && len(s.Groups) == 0 {
		return "none"
	}
	return s.Text()
}

func enabledText(on bool) string {
	if on {
		return "enabled"
	}
	return "disabled"
}
