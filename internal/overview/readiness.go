package overview

import (
	"fmt"
	"time"
)

// Meta's guidance for conversion leads optimisation ("good fit", as of
// 2026-09; docs/overview.md cites it).
const (
	// MinMonthlyLeads is the least leads a month.
	MinMonthlyLeads = 200
	// StageWindow is how soon after the lead the optimised stage should
	// come.
	StageWindow = 28 * 24 * time.Hour
	// MinStageShare and MaxStageShare bound the share of leads that reach
	// the optimised stage within StageWindow.
	MinStageShare, MaxStageShare = 0.01, 0.40
	// MinStages is the least mapped stages Meta validates; RecommendedStages
	// what it recommends.
	MinStages, RecommendedStages = 2, 3
	// daysPerMonth turns 4 weeks' leads into a month's.
	daysPerMonth = 365.25 / 12
)

// ReadinessInput is what the readiness checks read.
type ReadinessInput struct {
	// Goal is the stage the account optimises toward.
	Goal string
	// MonthLeads counts the leads of the 4 full weeks before this one.
	MonthLeads int64
	// CohortLeads counts the leads of the 4 full weeks before those, and
	// CohortReached those at Goal or a later stage now: 28 days or more
	// after their capture, mostly within StageWindow of it.
	CohortLeads, CohortReached int64
	// UpdateDays says, for each of the last 7 full days, whether a lead
	// reached a stage on it, whichever way the change came in.
	UpdateDays []bool
	// MappedStages counts the stages that send an event.
	MappedStages int
	// InstantFormEvents counts the events of Instant Form leads sent (or
	// built) of the month's leads, and WithLeadID those carrying Meta's
	// lead id.
	InstantFormEvents, WithLeadID int64
}

// Check is one readiness check: passed or not, with its figures and, when
// it fails, what to change.
type Check struct {
	Name   string
	Pass   bool
	Figure string
	Fix    string
}

// Readiness checks an account against Meta's guidance for conversion leads
// optimisation toward in.Goal.
func Readiness(in ReadinessInput) []Check {
	days := 0
	for _, d := range in.UpdateDays {
		if d {
			days++
		}
	}
	share := 0.0
	if in.CohortLeads > 0 {
		share = float64(in.CohortReached) / float64(in.CohortLeads)
	}
	monthly := float64(in.MonthLeads) * daysPerMonth / 28
	checks := []Check{{
		Name:   "At least 200 leads a month",
		Pass:   monthly >= MinMonthlyLeads,
		Figure: fmt.Sprintf("%d leads in the 4 full weeks before this one, about %.0f a month", in.MonthLeads, monthly),
		Fix:    "Meta learns too slowly below 200 leads a month: widen the audience or the budget, or add the forms of other campaigns.",
	}, {
		Name: fmt.Sprintf("1–40 %% of leads reach %s within 28 days", in.Goal),
		Pass: in.CohortLeads > 0 && share >= MinStageShare && share <= MaxStageShare,
		Figure: fmt.Sprintf("%d of the %d leads of the 4 weeks before those have reached it (%.1f %%)",
			in.CohortReached, in.CohortLeads, 100*share),
		Fix: stageShareFix(in, share),
	}, {
		Name:   "Stage updates arrive at least daily",
		Pass:   len(in.UpdateDays) > 0 && days == len(in.UpdateDays),
		Figure: fmt.Sprintf("stage changes on %d of the last %d full days", days, len(in.UpdateDays)),
		Fix:    "Send stage changes as they happen (the stage API, a CRM connection) or upload them at least once a day.",
	}, {
		Name:   "At least two stages mapped (three recommended)",
		Pass:   in.MappedStages >= MinStages,
		Figure: fmt.Sprintf("%d stages mapped", in.MappedStages),
		Fix:    "Map more of your CRM's stages to events on the Stages page: Meta validates two and recommends three.",
	}}
	if in.InstantFormEvents > 0 {
		checks = append(checks, Check{
			Name:   "Instant Form leads carry Meta's lead id",
			Pass:   in.WithLeadID == in.InstantFormEvents,
			Figure: fmt.Sprintf("%d of %d Instant Form events", in.WithLeadID, in.InstantFormEvents),
			Fix:    "Post the leadgen id of Meta's lead webhook as meta_lead_id with every Instant Form lead: it is the best match key.",
		})
	}
	if checks[3].Pass && in.MappedStages < RecommendedStages {
		checks[3].Fix = "Passes; Meta recommends a third mapped stage."
	}
	return checks
}

func stageShareFix(in ReadinessInput, share float64) string {
	switch {
	case in.CohortLeads == 0:
		return "No leads were captured 5 to 8 weeks ago: the check needs two months of history."
	case share < MinStageShare:
		return fmt.Sprintf("Too few leads reach %s for Meta to learn from: optimise toward an earlier stage.", in.Goal)
	case share > MaxStageShare:
		return fmt.Sprintf("Most leads reach %s, so it tells Meta little: optimise toward a later stage.", in.Goal)
	}
	return ""
}
