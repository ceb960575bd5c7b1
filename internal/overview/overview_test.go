package overview

import (
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

var stages = []Stage{{Name: "qualified", Events: []string{"QualifiedLead"}}, {Name: "booked"}, {Name: "Won", Events: []string{"Purchase"}}}

func TestSumReachesEarlierStages(t *testing.T) {
	c := store.Counts{Leads: []store.LeadCount{
		{Span: 0, N: 10},
		{Span: 0, Stage: "qualified", N: 4},
		{Span: 0, Stage: "won", N: 2, Junk: true, JunkSignals: "honeypot"}, // case differs from the stage list
		{Span: 0, Stage: "lost", N: 1, Partial: true},                      // not a stage of the account
		{Span: 1, N: 100},
	}, Events: []store.EventCount{{Span: 0, Status: models.EventSent, N: 3}, {Span: 0, Status: models.EventQueued, N: 2}}}
	f := Sum(c, 0, stages)
	if f.Leads != 17 || f.Junk != 2 || f.Partial != 1 {
		t.Errorf("leads, junk, partial = %d, %d, %d; want 17, 2, 1", f.Leads, f.Junk, f.Partial)
	}
	if want := []int64{6, 2, 2}; f.Reached[0] != want[0] || f.Reached[1] != want[1] || f.Reached[2] != want[2] {
		t.Errorf("reached = %v; want %v (a won lead reached qualified and booked too)", f.Reached, want)
	}
	if f.Events[models.EventSent] != 3 || f.Waiting() != 2 {
		t.Errorf("events = %v", f.Events)
	}
	written := []string{"Qualified", "booked", "WON", "won", "lost", "Ärztin"}
	if got := AtOrAfter(stages, "BOOKED", written); len(got) != 3 || got[0] != "booked" || got[1] != "WON" || got[2] != "won" {
		t.Errorf("AtOrAfter(booked) = %v; want every spelling of booked and won", got)
	}
	if got := AtOrAfter(stages, "nope", written); got != nil {
		t.Errorf("AtOrAfter(nope) = %v; want nil", got)
	}
}

func TestMedian(t *testing.T) {
	c := store.Counts{Stages: []store.StageDelay{
		{Stage: "qualified", Hours: 30, N: 1}, {Stage: "qualified", Hours: 2, N: 2}, {Stage: "Qualified", Hours: 5, N: 1},
		{Stage: "won", Hours: 1, N: 9}, {Span: 1, Stage: "qualified", Hours: 0, N: 50},
	}}
	// 2, 2, 5, 30: the second of four is at 2 hours.
	if d, ok := Median(c, 0, Stage{Name: "qualified"}); !ok || d != 2*time.Hour+30*time.Minute {
		t.Errorf("median = %v, %v; want 2.5 h", d, ok)
	}
	if _, ok := Median(c, 0, Stage{Name: "booked"}); ok {
		t.Error("median of a stage without changes: want none")
	}
}

func TestJunkReasons(t *testing.T) {
	c := store.Counts{Leads: []store.LeadCount{
		{Junk: true, JunkSignals: "too_fast,honeypot", N: 2}, {Junk: true, JunkSignals: "honeypot", N: 3},
		{Junk: true, N: 1}, {Junk: false, JunkSignals: "", N: 50},
	}}
	got := JunkReasons(c, 0)
	want := []JunkReason{{"honeypot", 5}, {"too_fast", 2}, {"", 1}}
	if len(got) != len(want) {
		t.Fatalf("reasons = %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("reasons[%d] = %v; want %v", i, got[i], want[i])
		}
	}
}

func TestCoverageWeakestKeyCountsOnlyEventsThatCouldCarryIt(t *testing.T) {
	c := store.Counts{Events: []store.EventCount{
		{EventName: "Lead", Source: models.SourceInstantForm, Status: models.EventSent, N: 10,
			Keys: store.KeyCounts{Em: 10, Ph: 10, ExternalID: 10, LeadID: 10}},
		{EventName: "Lead", Source: models.SourceWebsite, Status: models.EventDryRun, N: 10,
			Keys: store.KeyCounts{Em: 10, Ph: 9, ExternalID: 10, FBC: 8, FBP: 10, IP: 10, UA: 10}},
		{EventName: "Lead", Source: models.SourceWebsite, Status: models.EventFailed, N: 100},
	}}
	cv := Coverages(c, 0)
	if len(cv) != 1 || cv[0].Events != 20 {
		t.Fatalf("coverages = %+v; want Lead's 20 sent or built events", cv)
	}
	// fbc: 8 of 10 website events (not of all 20); lead_id: 10 of 10.
	if w := cv[0].Weakest(); Keys[w].Name != "fbc" {
		t.Errorf("weakest = %s; want fbc", Keys[w].Name)
	}
}

func TestReadiness(t *testing.T) {
	checks := Readiness(ReadinessInput{Goal: "qualified", MonthLeads: 250, CohortLeads: 200, CohortReached: 30,
		UpdateDays: []bool{true, true, true, true, true, true, false}, MappedStages: 2, InstantFormEvents: 10, WithLeadID: 9})
	pass := map[string]bool{}
	for _, c := range checks {
		pass[c.Name] = c.Pass
	}
	want := map[string]bool{
		"At least 200 leads a month": true, "1–40 % of leads reach qualified within 28 days": true,
		"Stage updates arrive at least daily": false, "At least two stages mapped (three recommended)": true,
		"Instant Form leads carry Meta's lead id": false,
	}
	for name, p := range want {
		if got, ok := pass[name]; !ok || got != p {
			t.Errorf("%s: pass %v (present %v); want %v", name, got, ok, p)
		}
	}
	checks = Readiness(ReadinessInput{Goal: "won", MonthLeads: 10, CohortLeads: 100, CohortReached: 50})
	if checks[1].Pass || checks[1].Fix == "" {
		t.Errorf("50 %% reaching won: %+v; want a failure saying to optimise toward a later stage", checks[1])
	}
}

func TestQualified(t *testing.T) {
	tests := []struct {
		stages []Stage
		want   int
	}{
		{nil, -1},
		{[]Stage{{Name: "new"}, {Name: "Qualified"}}, 1},
		{[]Stage{{Name: "new"}, {Name: "demo", Events: []string{"Schedule"}}}, 1},
		{[]Stage{{Name: "new"}, {Name: "demo"}}, 0},
	}
	for _, tt := range tests {
		if got := Qualified(tt.stages); got != tt.want {
			t.Errorf("Qualified(%v) = %d; want %d", tt.stages, got, tt.want)
		}
	}
}

// Changes recorded under a label before it became an alias count as its
// stage: in the reached counts, the leads filter and the median.
func TestLabelsThatBecameAliasesCount(t *testing.T) {
	ss := []Stage{{Name: "qualified"}, {Name: "won", Aliases: []string{"Closed Won"}, Events: []string{"Purchase"}}}
	c := store.Counts{Leads: []store.LeadCount{
		{Stage: "closedwon", N: 3}, {Stage: "Closed-Won", N: 1}, {Stage: "won", N: 2}, {Stage: "Closed Lost", N: 5},
	}, Stages: []store.StageDelay{{Stage: "CLOSED WON", Hours: 4, N: 1}}}
	f := Sum(c, 0, ss)
	if f.Reached[0] != 6 || f.Reached[1] != 6 {
		t.Errorf("reached = %v; want [6 6]: closedwon, Closed-Won and won are the won stage", f.Reached)
	}
	if got := AtOrAfter(ss, "won", []string{"closedwon", "Closed Lost", "won"}); len(got) != 2 {
		t.Errorf("AtOrAfter(won) = %v; want closedwon and won", got)
	}
	if _, ok := Median(c, 0, ss[1]); !ok {
		t.Error("median of won: want the change under the alias")
	}
}

func TestReachedInCountsEachStageByItsOwnChanges(t *testing.T) {
	st := []Stage{{Name: "qualified", Aliases: []string{"SQL"}}, {Name: "booked"}, {Name: "Won"}}
	c := store.Counts{Stages: []store.StageDelay{
		{Span: 0, Stage: "qualified", Hours: 3, N: 2}, {Span: 0, Stage: "sql", N: 1}, // an alias counts as its stage
		{Span: 0, Stage: "won", N: 4},  // won leads did not reach booked or qualified in this span
		{Span: 0, Stage: "lost", N: 7}, // not a stage of the account
		{Span: 1, Stage: "qualified", N: 50},
	}}
	got := ReachedIn(c, 0, st)
	if want := []int64{3, 0, 4}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("ReachedIn = %v; want %v", got, want)
	}
}
