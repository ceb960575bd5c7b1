package store_test

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/decide/decidetest"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// The agency overview reads the counts and the sequences of all its
// accounts at once: each account's figures equal those it reads of that
// account alone, whatever its zone, before and after the counts merge.
func TestCountsAndSequencesOfManyAccounts(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		now := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC) // a Wednesday
		zones := []string{"America/New_York", "Asia/Kolkata", "Pacific/Auckland", "UTC"}
		var spans []store.Span
		var accounts []store.AccountZone
		for i, tz := range zones {
			loc, err := time.LoadLocation(tz)
			if err != nil {
				t.Fatal(err)
			}
			acc, err := s.CreateAccount(ctx, models.Account{Slug: fmt.Sprintf("acc-%d", i), Name: tz, Timezone: tz}, 0)
			if err != nil {
				t.Fatal(err)
			}
			d := newDataset(t, s, acc, models.ModeLive)
			if i != 3 { // the last has no sequence
				if err := s.CreateSequence(ctx, &models.Sequence{AccountID: acc.ID, DatasetID: d.ID, InitialEvent: "Lead", FinalEvent: "QualifiedLead"}); err != nil {
					t.Fatal(err)
				}
			}
			// Leads every 5 hours over the last 10 days, so that some
			// fall either side of each zone's week; one in three junk,
			// one in four qualified a day later, events of every kind.
			for j := range 48 {
				at := now.Add(-time.Duration(j*5+i) * time.Hour)
				l := lead(acc, at.UTC(), fmt.Sprintf("l%d-%d@example.com", i, j))
				l.Junk = j%3 == 0
				if l.Junk {
					l.JunkReasons = `[{"signal":"honeypot","message":"m"}]`
				}
				if err := s.InsertLead(ctx, &l); err != nil {
					t.Fatal(err)
				}
				if l.Junk {
					continue
				}
				status := []models.EventStatus{models.EventSent, models.EventQueued, models.EventFailed}[j%3]
				seqEvent(t, s, d, l, "Lead", at, status)
				if j%4 == 1 {
					if _, err := decidetest.Mark(ctx, s, models.StageChange{AccountID: acc.ID, LeadID: l.ID,
						Stage: models.StageQualified, OccurredAt: at.Add(24 * time.Hour).UTC()}); err != nil {
						t.Fatal(err)
					}
					seqEvent(t, s, d, l, "QualifiedLead", at.Add(24*time.Hour), models.EventSent)
				}
			}
			tomorrow := store.AddDays(now, 1, loc)
			spans = append(spans, store.Span{AccountID: acc.ID, From: store.AddDays(tomorrow, -7, loc), To: tomorrow, Loc: loc})
			accounts = append(accounts, store.AccountZone{AccountID: acc.ID, Loc: loc})
		}

		// A span's rows as sorted text, so that one account's read alone
		// compares with its part of all of them.
		key := func(c store.Counts, span int) []string {
			var out []string
			for _, r := range c.Leads {
				if r.Span == span {
					out = append(out, fmt.Sprintf("lead %s %v %v %s %d", r.Stage, r.Junk, r.Partial, r.JunkSignals, r.N))
				}
			}
			for _, r := range c.Stages {
				if r.Span == span {
					out = append(out, fmt.Sprintf("stage %s %d %d", r.Stage, r.Hours, r.N))
				}
			}
			for _, r := range c.Events {
				if r.Span == span {
					out = append(out, fmt.Sprintf("event %s %s %s %d %+v", r.Source, r.EventName, r.Status, r.N, r.Keys))
				}
			}
			slices.Sort(out)
			return out
		}
		// A span's leads by stage, junk and partial, its events by status
		// and its stage changes by stage, summed.
		sums := func(c store.Counts, span int) map[string]int64 {
			out := map[string]int64{}
			for _, r := range c.Leads {
				if r.Span == span {
					out[fmt.Sprintf("lead %s %v %v", r.Stage, r.Junk, r.Partial)] += r.N
				}
			}
			for _, r := range c.Stages {
				if r.Span == span {
					out["stage "+r.Stage] += r.N
				}
			}
			for _, r := range c.Events {
				if r.Span == span {
					out["event "+string(r.Status)] += r.N
				}
			}
			return out
		}
		check := func(when string) {
			t.Helper()
			all, err := s.Counts(ctx, spans, store.CountFilter{})
			if err != nil {
				t.Fatal(err)
			}
			// By status, as the agency overview reads them: the same sums.
			brief, err := s.Counts(ctx, spans, store.CountFilter{NoDelays: true, ByStatus: true})
			if err != nil {
				t.Fatal(err)
			}
			for i := range spans {
				if got, want := sums(brief, i), sums(all, i); !maps.Equal(got, want) || len(want) == 0 {
					t.Errorf("%s: account %d by status: %v; want %v", when, i, got, want)
				}
			}
			for i, sp := range spans {
				one, err := s.Counts(ctx, []store.Span{sp}, store.CountFilter{})
				if err != nil {
					t.Fatal(err)
				}
				if len(one.Leads) == 0 || len(one.Stages) == 0 || len(one.Events) == 0 {
					t.Fatalf("%s: account %d alone: %+v; want leads, stages and events to compare", when, i, one)
				}
				if own, among := key(one, 0), key(all, i); !slices.Equal(own, among) {
					t.Errorf("%s: account %d's counts among all:\n%q\nwant its own:\n%q", when, i, among, own)
				}
			}
			weeks, err := s.SequenceWeeksOf(ctx, accounts, now, 2)
			if err != nil {
				t.Fatal(err)
			}
			learning, err := s.LastWeekLearningOf(ctx, accounts, now)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := weeks[accounts[3].AccountID]; ok || len(weeks) != 3 {
				t.Errorf("%s: sequence weeks of %d accounts; want the 3 with a sequence", when, len(weeks))
			}
			for i, a := range accounts {
				one, err := s.SequenceWeeks(ctx, a.AccountID, a.Loc, now, 2)
				if err != nil {
					t.Fatal(err)
				}
				// The agency's count is the last full week's, up to the
				// learning threshold, and says the same of learning.
				if lw := learning[a.AccountID]; len(lw) != len(one) {
					t.Errorf("%s: account %d: last week's learning of %d sequences; want %d", when, i, len(lw), len(one))
				} else {
					for j, sc := range one {
						w, full := lw[j].Weeks, sc.Weeks[0]
						if len(w) != 1 || lw[j].Sequence.ID != sc.Sequence.ID || !w[0].Start.Equal(full.Start) ||
							w[0].Complete != min(full.Complete, store.LearningThreshold) || w[0].Limited() != sc.Learning().Limited {
							t.Errorf("%s: account %d sequence %d: last week's learning %+v; want the first of %+v, up to %d",
								when, i, j, w, sc.Weeks, store.LearningThreshold)
						}
					}
				}
				if among := weeks[a.AccountID]; !reflect.DeepEqual(one, among) {
					t.Errorf("%s: account %d's sequence weeks among all = %+v; want its own, %+v", when, i, among, one)
				}
				if i < 3 && (len(one) != 1 || one[0].Weeks[0].Complete+one[0].Weeks[1].Complete == 0) {
					t.Errorf("%s: account %d's sequence weeks = %+v; want complete sequences to compare", when, i, one)
				}
			}
		}
		check("deltas")
		if err := s.CompactCounts(ctx); err != nil {
			t.Fatal(err)
		}
		check("merged")
	})
}
