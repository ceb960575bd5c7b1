package store_test

import (
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// Stage counts are by when a lead reached the stage: a lead captured 12
// days ago that becomes qualified today counts this week, and last week's
// number stays as it was. A lead reaches a stage once: a second change to
// it does not count again, and an older change that arrives later (an
// upload of history, a CRM catching up) takes the first one's place. The
// counts equal their definition after each write, merged or not.
func TestStageCountsByWhenReached(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		now := time.Now().UTC().Truncate(time.Second)
		weeks := store.WeekStarts(time.UTC, now, 3)
		spans := []store.Span{
			{AccountID: a.ID, From: weeks[0], To: weeks[1], Loc: time.UTC},
			{AccountID: a.ID, From: weeks[1], To: weeks[2], Loc: time.UTC},
			{AccountID: a.ID, From: weeks[2], To: weeks[2].AddDate(0, 0, 7), Loc: time.UTC},
		}
		l := storedLead(t, s, a, now.Add(-12*24*time.Hour), "old@example.com")
		other := storedLead(t, s, b, now.Add(-12*24*time.Hour), "b@example.com")
		record := func(acc models.Account, leadID int64, at time.Time, origin decide.Origin, via string) {
			t.Helper()
			out, err := decide.New(s, nil, nil).RecordAll(ctx, acc.ID, []decide.Change{{Keys: decide.ByID(leadID),
				Stage: models.StageQualified, OccurredAt: at, Origin: origin, Via: via}})
			if err != nil || out[0].Refused != nil {
				t.Fatalf("record qualified at %s: %v, %+v", at, err, out[0].Refused)
			}
		}
		// reached is the qualified changes counted in each week: two weeks
		// ago, last week, this week.
		reached := func(when string) [3]int64 {
			t.Helper()
			noDrift(t, s, when)
			c, err := s.Counts(ctx, spans, store.CountFilter{})
			if err != nil {
				t.Fatal(err)
			}
			var out [3]int64
			for _, r := range c.Stages {
				if r.Stage == models.StageQualified {
					out[r.Span] += r.N
				}
			}
			return out
		}
		before := reached("before")
		if before != [3]int64{} {
			t.Fatalf("reached qualified before any change = %v; want none", before)
		}

		record(a, l.ID, now, decide.FromAPI, models.ViaAPI)
		record(b, other.ID, now, decide.FromAPI, models.ViaAPI)
		if got := reached("qualified today"); got != [3]int64{0, 0, 1} {
			t.Errorf("reached qualified by week = %v; want [0 0 1]: this week's, last week's unchanged", got)
		}
		if err := s.CompactCounts(ctx); err != nil {
			t.Fatal(err)
		}
		if got := reached("merged"); got != [3]int64{0, 0, 1} {
			t.Errorf("merged: reached qualified by week = %v; want [0 0 1]", got)
		}

		// Qualified again, by a CRM, an hour later: still one lead.
		record(a, l.ID, now.Add(-time.Minute), decide.FromCRM, models.ViaCRM)
		if got := reached("qualified again"); got != [3]int64{0, 0, 1} {
			t.Errorf("after a second change to qualified: %v; want [0 0 1]", got)
		}

		// An upload says it was qualified 10 days ago: it reached it then.
		record(a, l.ID, now.Add(-10*24*time.Hour), decide.FromAPI, models.ViaUpload)
		got := reached("older change uploaded")
		var want [3]int64
		for i, sp := range spans {
			if at := now.Add(-10 * 24 * time.Hour); !at.Before(sp.From) && at.Before(sp.To) {
				want[i] = 1
			}
		}
		if got != want {
			t.Errorf("after an older change to qualified: %v; want %v (counted in the week it happened, once)", got, want)
		}
		if err := s.CompactCounts(ctx); err != nil {
			t.Fatal(err)
		}
		if got := reached("merged again"); got != want {
			t.Errorf("merged again: %v; want %v", got, want)
		}

		// A batch (as an upload or a CRM sync writes one, in one
		// statement) with two older changes to the same stage of a lead
		// already there: the oldest counts, once.
		l2 := storedLead(t, s, a, now.Add(-20*24*time.Hour), "batch@example.com")
		record(a, l2.ID, now, decide.FromAPI, models.ViaAPI)
		var batch []decide.Change
		for _, ago := range []int{3, 5} {
			batch = append(batch, decide.Change{Keys: decide.ByID(l2.ID), Stage: models.StageQualified,
				OccurredAt: now.Add(-time.Duration(ago) * 24 * time.Hour), Origin: decide.FromAPI, Via: models.ViaUpload})
		}
		if out, err := decide.New(s, nil, nil).RecordAll(ctx, a.ID, batch); err != nil || out[0].Refused != nil || out[1].Refused != nil {
			t.Fatalf("record the batch: %v, %+v", err, out)
		}
		for i, sp := range spans {
			if at := now.Add(-5 * 24 * time.Hour); !at.Before(sp.From) && at.Before(sp.To) {
				want[i]++
			}
		}
		if got := reached("a batch of older changes"); got != want {
			t.Errorf("after a batch of older changes: %v; want %v", got, want)
		}

		// The lead's capture time moves (a partial lead completed): its
		// reach stays where it happened.
		l, err := s.Lead(ctx, a.ID, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		l.CreatedAt = l.CreatedAt.Add(-time.Hour)
		if err := s.SaveLead(ctx, &l); err != nil {
			t.Fatal(err)
		}
		if got := reached("lead moved"); got != want {
			t.Errorf("after the lead moved: %v; want %v", got, want)
		}
	})
}
