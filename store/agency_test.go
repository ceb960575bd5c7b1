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
		a, b, c := threeAccounts(t, s)
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

// DatasetsOf, StagesOf and StageMappingsOf read, by account, what the
// account's own readers read of the columns they name, in the same order,
// and nothing of an account not asked for.
func TestAgencyReadsByAccount(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b, c := threeAccounts(t, s)
		now := time.Now().UTC().Truncate(time.Second)
		for _, acc := range []models.Account{a, b, c} {
			main := testDataset(t, s, acc, "Main", "111111111111111")
			held := testDataset(t, s, acc, "Backup", "222222222222222")
			if err := s.PauseDataset(ctx, held.ID, "token expired", now); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.HoldDataset(ctx, main.ID, now, "HTTP 503", func(int) time.Duration { return time.Minute }, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := s.StartStageTemplate(ctx, acc.ID, main.ID, nil); err != nil {
				t.Fatal(err)
			}
			m := models.SendRule{AccountID: acc.ID, DatasetID: held.ID, Name: "Big deals", Mode: "stage", Stage: "WON", EventName: "BigDeal",
				Combinator: "and", Conditions: "[]"}
			if err := s.CreateSendRule(ctx, &m, nil); err != nil {
				t.Fatal(err)
			}
		}
		won := stageNamed(t, s, a.ID, "won")
		if _, err := s.SetStageAliases(ctx, a.ID, won.ID, []string{"Closed Won", "Signed"}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetBookingStage(ctx, a.ID, won.ID, true); err != nil {
			t.Fatal(err)
		}

		ids := []int64{a.ID, b.ID}
		datasets, err := s.DatasetsOf(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		stages, err := s.StagesOf(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		mappings, err := s.StageMappingsOf(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []int{len(datasets), len(stages), len(mappings)} {
			if m != 2 {
				t.Errorf("accounts read: datasets %d, stages %d, mappings %d; want the 2 asked for", len(datasets), len(stages), len(mappings))
				break
			}
		}
		for _, acc := range ids {
			own, err := s.Datasets(ctx, acc)
			if err != nil {
				t.Fatal(err)
			}
			var want []models.Dataset
			for _, d := range own {
				want = append(want, models.Dataset{ID: d.ID, AccountID: d.AccountID, Kind: d.Kind, Name: d.Name, Mode: d.Mode,
					PausedAt: d.PausedAt, PausedReason: d.PausedReason, HeldSince: d.HeldSince, CreatedAt: d.CreatedAt})
			}
			slices.SortFunc(want, func(x, y models.Dataset) int { return cmpNameID(x.Name, y.Name, x.ID, y.ID) })
			if got := datasets[acc]; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("account %d datasets\n%+v\nwant\n%+v", acc, got, want)
			}
			if got := datasets[acc]; len(got) != 2 || got[0].PausedAt == nil || got[0].PausedReason != "token expired" ||
				got[1].HeldSince == nil || !got[1].HeldSince.Equal(now) {
				t.Errorf("account %d: the paused and the held dataset read %+v", acc, got)
			}

			ownStages, err := s.Stages(ctx, acc)
			if err != nil {
				t.Fatal(err)
			}
			if got := stages[acc]; fmt.Sprint(got) != fmt.Sprint(ownStages) || len(got) == 0 {
				t.Errorf("account %d stages\n%+v\nwant\n%+v", acc, got, ownStages)
			}

			rules, err := s.SendRules(ctx, acc)
			if err != nil {
				t.Fatal(err)
			}
			var wantMappings []string
			for _, r := range rules {
				if r.Mode == "stage" {
					wantMappings = append(wantMappings, fmt.Sprint(r.ID, r.AccountID, r.DatasetID, r.Name, r.Mode, r.Stage, r.EventName, r.Enabled, r.Position))
				}
			}
			var gotMappings []string
			for _, r := range mappings[acc] {
				gotMappings = append(gotMappings, fmt.Sprint(r.ID, r.AccountID, r.DatasetID, r.Name, r.Mode, r.Stage, r.EventName, r.Enabled, r.Position))
			}
			if !slices.Equal(gotMappings, wantMappings) || len(gotMappings) < 2 {
				t.Errorf("account %d mappings\n%q\nwant\n%q", acc, gotMappings, wantMappings)
			}
		}
		if st := stages[a.ID]; !slices.ContainsFunc(st, func(x models.Stage) bool {
			return x.ID == won.ID && x.Booking && slices.Equal([]string(x.Aliases), []string{"Closed Won", "Signed"})
		}) {
			t.Errorf("a's won stage lost its aliases or booking: %+v", st)
		}
		for _, none := range []func() (int, error){
			func() (int, error) { m, err := s.DatasetsOf(ctx, nil); return len(m), err },
			func() (int, error) { m, err := s.StagesOf(ctx, nil); return len(m), err },
			func() (int, error) { m, err := s.StageMappingsOf(ctx, nil); return len(m), err },
		} {
			if n, err := none(); n != 0 || err != nil {
				t.Errorf("no accounts: %d, %v", n, err)
			}
		}
	})
}

// cmpNameID orders by name, then id: as the datasets' readers list them.
func cmpNameID(a, b string, x, y int64) int {
	if a != b {
		if a < b {
			return -1
		}
		return 1
	}
	return int(x - y)
}

// threeAccounts are twoAccounts' and a third, quiet one.
func threeAccounts(t *testing.T, s *store.Store) (models.Account, models.Account, models.Account) {
	t.Helper()
	a, b := twoAccounts(t, s)
	c, err := s.CreateAccount(t.Context(), models.Account{Slug: "quiet", Name: "Quiet"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return a, b, c
}
