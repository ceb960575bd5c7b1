package capture

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// setupStages is setup's account with the template's stage mappings as
// its send rules.
func setupStages(t *testing.T, s *store.Store) models.Account {
	t.Helper()
	acc, d := setup(t, s)
	for _, m := range store.TemplateMappings(d) {
		if err := s.CreateSendRule(t.Context(), &m, nil); err != nil {
			t.Fatal(err)
		}
	}
	return acc
}

// A batch of stage changes, as a CSV upload records it, is decided in
// order in one pass: a lead's later change sees its earlier ones (of the
// batch too), a change repeated within the batch or recorded before is a
// replay that queues nothing, problems are per change, and a dry run
// says what recording would queue and writes nothing.
func TestStagesBatch(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc := setupStages(t, s)
		c := New(s, nil, nil)
		var leads []models.Lead
		for _, email := range []string{"a@acme.example", "b@acme.example"} {
			r, err := c.Capture(ctx, acc, valid(t, webLead(email)))
			if err != nil {
				t.Fatal(err)
			}
			leads = append(leads, r.Lead)
		}
		at := time.Now().UTC().Truncate(time.Second).Add(time.Second)
		key := func(l models.Lead) store.LeadKey {
			return store.LeadKey{Field: "id", Value: strconv.FormatInt(l.ID, 10)}
		}
		value := 900.0
		items := []decide.Change{
			{Keys: []store.LeadKey{key(leads[0])}, Stage: "qualified", OccurredAt: at},
			{Keys: []store.LeadKey{key(leads[0])}, Stage: "won", OccurredAt: at.Add(time.Minute), Value: &value, Currency: "EUR"},
			{Keys: []store.LeadKey{key(leads[0])}, Stage: "qualified", OccurredAt: at}, // a replay within the batch
			{Keys: []store.LeadKey{store.LeadKey{Field: "external_id", Value: "nobody"}}, Stage: "qualified", OccurredAt: at},
			{Keys: []store.LeadKey{key(leads[1])}, Stage: "won", OccurredAt: at}, // a Purchase without its value
			{Keys: []store.LeadKey{key(leads[1])}, Stage: "booked", OccurredAt: at},
		}
		names := func(evs []models.Event) []string {
			var out []string
			for _, e := range evs {
				n := e.EventName
				if e.FilledIn {
					n += " (filled in)"
				}
				out = append(out, n)
			}
			return out
		}
		want := [][]string{{"QualifiedLead"}, {"Schedule (filled in)", "Purchase"}, {"QualifiedLead"}, nil, nil,
			{"QualifiedLead (filled in)", "Schedule"}}
		check := func(out []decide.Outcome, dry bool) {
			t.Helper()
			for i, o := range out {
				if got := names(o.Events); !slices.Equal(got, want[i]) {
					t.Errorf("dry %v: change %d events = %v; want %v", dry, i, got, want[i])
				}
			}
			if !out[2].Replayed || out[0].Replayed {
				t.Errorf("dry %v: replayed = %v, %v; want only the repeat", dry, out[0].Replayed, out[2].Replayed)
			}
			if p := out[3].Refused; p == nil || p.Code != decide.LeadNotFound || p.Field != "lead.external_id" {
				t.Errorf("dry %v: unknown lead = %+v; want lead_not_found naming lead.external_id", dry, p)
			}
			if p := out[4].Refused; p == nil || p.Field != "value" {
				t.Errorf("dry %v: Purchase without value = %+v; want a problem naming value", dry, p)
			}
			if out[1].Lead.Stage != "won" || out[5].Lead.Stage != "booked" {
				t.Errorf("dry %v: stages after = %q, %q; want won, booked", dry, out[1].Lead.Stage, out[5].Lead.Stage)
			}
		}

		out, err := decide.New(s, nil, nil).DryRun(ctx, acc.ID, items)
		if err != nil {
			t.Fatal(err)
		}
		check(out, true)
		if cs, _ := s.StageChanges(ctx, acc.ID, leads[0].ID); len(cs) != 0 {
			t.Fatalf("a dry run stored %d changes", len(cs))
		}

		out, err = decide.New(s, nil, nil).RecordAll(ctx, acc.ID, items)
		if err != nil {
			t.Fatal(err)
		}
		check(out, false)
		if out[2].Change.ID != out[0].Change.ID || out[0].Change.ID == 0 {
			t.Errorf("the repeat's change = %d; want the first's, %d", out[2].Change.ID, out[0].Change.ID)
		}
		evs := eventsByName(t, s, acc.ID, leads[0].ID)
		if p := evs["Purchase"]; p.Value == nil || *p.Value != 900 || p.Currency != "EUR" ||
			!evs["Schedule"].EventTime.Before(p.EventTime) || !evs["QualifiedLead"].EventTime.Before(evs["Schedule"].EventTime) {
			t.Errorf("lead 1 events = %+v; want QualifiedLead, Schedule, Purchase 900 EUR in that order", evs)
		}
		if l, _ := s.Lead(ctx, acc.ID, leads[1].ID); l.Stage != "booked" {
			t.Errorf("lead 2 stage = %q; want booked", l.Stage)
		}

		// The same batch again records and queues nothing.
		again, err := decide.New(s, nil, nil).RecordAll(ctx, acc.ID, items)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range again {
			if o.Refused == nil && (!o.Replayed || o.Change.ID != out[i].Change.ID || !slices.Equal(names(o.Events), want[i])) {
				t.Errorf("again: change %d = %+v; want a replay of change %d with its events", i, o, out[i].Change.ID)
			}
		}
		if cs, _ := s.StageChanges(ctx, acc.ID, leads[0].ID); len(cs) != 2 {
			t.Errorf("lead 1 has %d changes; want 2", len(cs))
		}
	})
}
