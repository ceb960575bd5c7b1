package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// ArrangeStages orders an account's stages, gives them their aliases and
// booking, adds new ones, and refuses a list that drops a stage or gives
// one label to two stages, changing nothing then.
func TestArrangeStages(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		q, bk, w := stageNamed(t, s, a.ID, "qualified"), stageNamed(t, s, a.ID, "booked"), stageNamed(t, s, a.ID, "won")
		got, err := s.ArrangeStages(ctx, a.ID, []models.Stage{
			{ID: w.ID, Aliases: []string{" Closed Won ", "closedwon", "won"}, Booking: true},
			{Name: "Proposal", Aliases: []string{"Proposal Sent"}},
			{ID: q.ID}, {ID: bk.ID},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 4 || got[1].ID == 0 {
			t.Fatalf("ArrangeStages = %+v; want four stages, the new one with an id", got)
		}
		if names := stageNames(t, s, a.ID); names != "won*,Proposal,qualified,booked" {
			t.Errorf("stages = %s; want won*,Proposal,qualified,booked", names)
		}
		won := stageNamed(t, s, a.ID, "won")
		if strings.Join(won.Aliases, "|") != "Closed Won" {
			t.Errorf("won's aliases = %q; want [Closed Won]: trimmed, each label once, not its own name", won.Aliases)
		}
		if p := stageNamed(t, s, a.ID, "Proposal"); strings.Join(p.Aliases, "|") != "Proposal Sent" {
			t.Errorf("Proposal's aliases = %q", p.Aliases)
		}

		ss, _ := s.Stages(ctx, a.ID)
		keep := func() []models.Stage {
			out := make([]models.Stage, len(ss))
			for i, x := range ss {
				out[i] = models.Stage{ID: x.ID, Aliases: x.Aliases}
			}
			return out
		}
		claimed := keep()
		claimed[2].Aliases = []string{"closed-won"}
		_, err = s.ArrangeStages(ctx, a.ID, claimed)
		if ae, ok := errors.AsType[*store.AliasError](err); !ok || !strings.Contains(ae.Message, "the stage won") || !strings.Contains(ae.Message, "the stage qualified") {
			t.Errorf("one label, two stages: err = %v; want an AliasError naming won and qualified", err)
		}
		dropped := keep()[1:]
		if _, err := s.ArrangeStages(ctx, a.ID, dropped); err == nil {
			t.Error("a list without won: want an error, as the list never loses a stage")
		}
		twice := keep()
		twice[0].Booking, twice[3].Booking = true, true
		if _, err := s.ArrangeStages(ctx, a.ID, twice); err == nil {
			t.Error("two booking stages: want an error")
		}
		dup := append(keep(), models.Stage{Name: "WON"})
		if _, err := s.ArrangeStages(ctx, a.ID, dup); err == nil {
			t.Error("a new stage named as won: want an error")
		}
		if names := stageNames(t, s, a.ID); names != "won*,Proposal,qualified,booked" {
			t.Errorf("after refused lists, stages = %s; want them unchanged", names)
		}
		// Another account's stage is not this one's.
		other := stageNamed(t, s, b.ID, "won")
		if _, err := s.ArrangeStages(ctx, a.ID, append(keep(), models.Stage{ID: other.ID})); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account's stage: err = %v; want ErrNotFound", err)
		}
		if names := stageNames(t, s, b.ID); names != "qualified,booked*,won" {
			t.Errorf("beta's stages = %s; want the template's", names)
		}
	})
}

// MappedCRMStages lists the account's CRM stage rows that map to a stage,
// and no other account's.
func TestMappedCRMStages(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		now := time.Now().UTC()
		for _, acc := range []models.Account{a, b} {
			c := models.CRMConnection{AccountID: acc.ID, Kind: "hubspot", Name: "Sales"}
			if err := s.CreateCRMConnection(ctx, &c); err != nil {
				t.Fatal(err)
			}
			if err := s.ListCRMStages(ctx, acc.ID, c.ID, []models.CRMStage{{CRMStageID: "1", Label: "Deal Won"}, {CRMStageID: "2", Label: "Lost"}}); err != nil {
				t.Fatal(err)
			}
			if err := s.MapCRMStages(ctx, acc.ID, c.ID, map[string]string{"1": "won"}, now); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := s.MappedCRMStages(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].AccountID != a.ID || rows[0].Label != "Deal Won" || rows[0].Stage != "won" {
			t.Errorf("MappedCRMStages = %+v; want acme's Deal Won → won only", rows)
		}
	})
}
