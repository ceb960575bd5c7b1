package capture

import (
	"strconv"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// An event an earlier change of a batch queues and a later change of the
// same lead cancels is written cancelled: qualified then booked in one
// batch leaves the "stage is qualified" rule's event unsent.
func TestStagesBatchCancelsItsOwnEvents(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, d := setup(t, s)
		addRule(t, s, acc, d, models.SendRule{Name: "Qualified", Mode: "automatic_match", EventName: "QualifiedLead", Enabled: true},
			rule.Condition{Field: "stage", MatchType: rule.Equals, Pattern: models.StageQualified})
		c := New(s, nil, nil)
		r, err := c.Capture(ctx, acc, valid(t, webLead("q@acme.example")))
		if err != nil {
			t.Fatal(err)
		}
		at := time.Now().UTC().Truncate(time.Second).Add(time.Second)
		key := store.LeadKey{Field: "id", Value: strconv.FormatInt(r.Lead.ID, 10)}
		items := []decide.Change{
			{Keys: []store.LeadKey{key}, Stage: models.StageQualified, OccurredAt: at},
			{Keys: []store.LeadKey{key}, Stage: models.StageBooked, OccurredAt: at.Add(time.Minute)},
		}
		if _, err := decide.New(s, nil, nil).RecordAll(ctx, acc.ID, items); err != nil {
			t.Fatal(err)
		}
		q := eventsByName(t, s, acc.ID, r.Lead.ID)["QualifiedLead"]
		if q.ID == 0 || q.Status != models.EventFailed || q.LastError == "" {
			t.Errorf("QualifiedLead = %s (%q); want it stored and cancelled with the reason, the lead being booked", q.Status, q.LastError)
		}
	})
}

// A lead's changes that come together are never split between a batch's
// chunks of 1,000: in a dry run the won change sees the qualified one just
// before it, across the chunk's end, and fills nothing in again.
func TestStagesBatchKeepsAKeysChangesTogether(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc := setupStages(t, s)
		c := New(s, nil, nil)
		r, err := c.Capture(ctx, acc, valid(t, webLead("a@acme.example")))
		if err != nil {
			t.Fatal(err)
		}
		at := time.Now().UTC().Truncate(time.Second).Add(time.Second)
		key := store.LeadKey{Field: "id", Value: strconv.FormatInt(r.Lead.ID, 10)}
		var items []decide.Change
		for i := 0; i < 999; i++ {
			items = append(items, decide.Change{Keys: []store.LeadKey{store.LeadKey{Field: "external_id", Value: "nobody"}}, Stage: "qualified", OccurredAt: at})
		}
		v := 900.0
		items = append(items,
			decide.Change{Keys: []store.LeadKey{key}, Stage: "qualified", OccurredAt: at},
			decide.Change{Keys: []store.LeadKey{key}, Stage: "won", OccurredAt: at.Add(time.Minute), Value: &v, Currency: "EUR"})
		out, err := decide.New(s, nil, nil).DryRun(ctx, acc.ID, items)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range out[1000].Events {
			if e.EventName == "QualifiedLead" {
				t.Errorf("the dry run of change 1001 fills in QualifiedLead, which change 1000 queued")
			}
		}
	})
}
