package setup

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// A send rule of mode booking, which files exported before migration 0019
// have, sent when a lead reached the account's booking stage. It is now
// the stage mapping of that stage, and a file's booking rule is applied as
// that mapping, with a warning: found by name among the account's stage
// mappings (where migration 0019 put the account's booking rules), with the
// rule's settings and a place before the file's stage mappings, as a
// booking rule came before them. Its events keep their ids (a booking
// rule's record key was the lead's and the stage's, as a mapping's is), so
// applying an old file sends nothing twice. An account without a booking
// stage refuses it: which stage it should send at is a person's choice.

// errNoBookingStage is apply's error for a booking rule of an account
// without a booking stage, which validation refuses first.
var errNoBookingStage = errors.New("setup: the account has no booking stage")

// isBooking reports whether a clean send rule of the file is a booking
// rule.
func (r RuleSpec) isBooking() bool { return r.Mode == rule.Booking }

// bookingMappingOf is the stored rule old as the file's booking rule spec
// wants it: a stage mapping of stage, the account's booking stage, to the
// destinations ids, sending once per lead, with all the rule says.
func bookingMappingOf(old models.SendRule, spec RuleSpec, ids []int64, stage string) models.SendRule {
	return mappingRuleOf(old, MappingSpec{Name: spec.Name, Stage: stage, Dataset: spec.Dataset, Destinations: spec.Destinations,
		EventName: spec.EventName, Combinator: spec.Combinator, Conditions: spec.Conditions, Groups: spec.Groups, Value: spec.Value,
		Currency: spec.Currency, ActionSource: spec.ActionSource, TestEventCode: spec.TestEventCode, Enabled: spec.Enabled}, ids, stage)
}

// bookingNames are the lower-case names of the clean file's booking
// rules: stage mappings of the account that the file keeps.
func (f File) bookingNames() map[string]bool {
	out := map[string]bool{}
	for _, r := range f.SendRules {
		if r.isBooking() {
			out[strings.ToLower(r.Name)] = true
		}
	}
	return out
}

// bookingStageProblem is the problem of a booking rule of an account that
// has no booking stage.
const bookingStageProblem = "booking is no longer a send mode: a booking rule is applied as the stage mapping of the account's booking stage, " +
	"and the account has none; mark its booking stage on the Stages page, or move this rule to stage_mappings with the stage it sends at"

// bookingWarnings say that the file's booking rules are applied as stage
// mappings.
func (f File) bookingWarnings() []Warning {
	var ws []Warning
	for i, r := range f.SendRules {
		if r.isBooking() {
			ws = append(ws, Warning{Path: fmt.Sprintf("send_rules[%d].mode", i), Message: "booking is no longer a send mode: " +
				"this rule is applied as the stage mapping of the account's booking stage, which sends the same events under the same ids; " +
				"an export of the account lists it in stage_mappings"})
		}
	}
	return ws
}

// bookingMapping applies the file's booking rule spec, at path, as the
// stage mapping of the account's booking stage: the account's mapping of
// its name (mappings, by lower-case name), or a new one. existed are the
// ids of the rules the account had before the apply. It returns the
// mapping's id.
func (a *applier) bookingMapping(ctx context.Context, accountID int64, path string, spec RuleSpec, mappings map[string]models.SendRule,
	existed map[int64]bool, datasetID map[string]int64, datasetName map[int64]string) (int64, error) {
	stages, err := a.tx.Stages(ctx, accountID)
	if err != nil {
		return 0, err
	}
	st, ok := store.BookingStage(stages)
	if !ok {
		return 0, fmt.Errorf("%s: %w", path, errNoBookingStage)
	}
	old, found := mappings[strings.ToLower(spec.Name)]
	if !found {
		old = models.SendRule{AccountID: accountID}
	}
	want := bookingMappingOf(old, spec, destinationIDs(spec.Dataset, spec.Destinations, datasetID), st.Name)
	if err := a.saveRule(ctx, found, old, &want); err != nil {
		return 0, err
	}
	// Counted with the send rules: the section of the file it is in.
	if found && existed[old.ID] {
		if a.mappingChanges(path, destinationsKey(spec.Destinations), old, want, datasetName) {
			a.report.Summary.RulesChanged++
		}
	} else {
		a.change(path, "created %q as a stage mapping (%s)", want.Name, mappingSummary(want, datasetName))
		a.report.Summary.RulesAdded++
	}
	a.booking = append(a.booking, want.ID)
	return want.ID, nil
}
