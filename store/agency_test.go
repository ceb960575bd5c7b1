package store_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/decide/decidetest"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// StageLabelsOf lists each account's labels as written, once each, not the
// junk markers, at most MaxStageLabels of an account; an account with no
// change is missing.
func TestStageLabelsOf(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		c, err := s.CreateAccount(ctx, models.Account{Slug: "quiet", Name: "Quiet"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		la := storedLead(t, s, a, now.Add(-time.Hour), "ann@example.com")
		lb := storedLead(t, s, b, now.Add(-time.Hour), "bob@example.com")
		i := 0
		add := func(l models.Lead, stage string) {
			t.Helper()
			i++
			ch := models.StageChange{AccountID: l.AccountID, LeadID: l.ID, Stage: stage, OccurredAt: now.Add(time.Duration(i) * time.Second), CreatedAt: now}
			if _, err := decidetest.Mark(ctx, s, ch); err != nil {
				t.Fatal(err)
			}
		}
		for _, st := range []string{"Demo", "Angebot verschickt (Süd)", "junk", "DEMO", "not_junk", "Demo"} {
			add(la, st)
		}
		for n := range store.MaxStageLabels + 5 {
			add(lb, fmt.Sprintf("stage %03d", n))
		}
		got, err := s.StageLabelsOf(ctx, []int64{a.ID, b.ID, c.ID})
		if err != nil {
			t.Fatal(err)
		}
		la2 := slices.Clone(got[a.ID])
		slices.Sort(la2)
		if want := []string{"Angebot verschickt (Süd)", "DEMO", "Demo"}; !slices.Equal(la2, want) {
			t.Errorf("a's labels = %q; want %q", got[a.ID], want)
		}
		if n := len(got[b.ID]); n != store.MaxStageLabels {
			t.Errorf("b has %d labels; want the first %d", n, store.MaxStageLabels)
		}
		if l, ok := got[c.ID]; ok {
			t.Errorf("c's labels = %q; want none", l)
		}
		if none, err := s.StageLabelsOf(ctx, nil); err != nil || len(none) != 0 {
			t.Errorf("no accounts: %v, %v", none, err)
		}
	})
}
