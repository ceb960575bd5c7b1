package store_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// A rule names several destinations of its account: they are stored in
// the order of their ids whatever order they were named in, read back by
// every reader (the rules list and capture's own query), kept in its
// versions, and refused when one is another account's, named twice or
// past MaxDestinations. A rule of one destination keeps the versions it
// had.
func TestRuleDestinations(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		meta := newDataset(t, s, a, models.ModeLive)
		tiktok := models.Dataset{AccountID: a.ID, Kind: models.KindTikTok, Name: "TikTok", PixelID: "C4TIKTOK1234", EventSource: "web",
			Mode: models.ModeLive, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &tiktok); err != nil {
			t.Fatal(err)
		}
		other := newDataset(t, s, b, models.ModeLive)

		r := models.SendRule{AccountID: a.ID, Name: "Everywhere", Mode: "automatic_completed", EventName: "QualifiedLead",
			Combinator: "and", Conditions: "[]", Enabled: true}
		r.SetDestinations([]int64{tiktok.ID, meta.ID})
		if err := s.CreateSendRule(ctx, &r, nil); err != nil {
			t.Fatal(err)
		}
		got, err := s.SendRule(ctx, a.ID, r.ID)
		if err != nil || !slices.Equal(got.Destinations(), []int64{meta.ID, tiktok.ID}) {
			t.Fatalf("stored destinations = %v, %v; want Meta then TikTok, by id", got.Destinations(), err)
		}
		again := got
		again.SetDestinations([]int64{meta.ID, tiktok.ID})
		if err := s.SaveSendRule(ctx, &again, nil); err != nil {
			t.Fatal(err)
		}
		facts, _, err := s.LookupCapture(ctx, []store.CaptureQuery{{AccountID: a.ID}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(facts[a.ID].Rules, func(o models.SendRule) bool { return o.ID == r.ID })
		if i < 0 || !slices.Equal(facts[a.ID].Rules[i].Destinations(), []int64{meta.ID, tiktok.ID}) {
			t.Errorf("capture's rules = %+v; want Everywhere with both destinations", facts[a.ID].Rules)
		}

		for _, tt := range []struct {
			name string
			ids  []int64
			want error
		}{
			{"another account's", []int64{meta.ID, other.ID}, store.ErrNotFound},
			{"none that exists", []int64{0}, store.ErrNotFound},
			{"one twice", []int64{meta.ID, tiktok.ID, meta.ID}, store.ErrDestinations},
			{"too many", []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, store.ErrDestinations},
		} {
			bad := got
			bad.SetDestinations(tt.ids)
			if err := s.SaveSendRule(ctx, &bad, nil); !errors.Is(err, tt.want) {
				t.Errorf("%s: save = %v; want %v", tt.name, err, tt.want)
			}
		}
		if after, _ := s.SendRule(ctx, a.ID, r.ID); !slices.Equal(after.Destinations(), []int64{meta.ID, tiktok.ID}) {
			t.Errorf("after refused saves: %v; want them unchanged", after.Destinations())
		}

		one := got
		one.SetDestinations([]int64{meta.ID})
		if err := s.SaveSendRule(ctx, &one, nil); err != nil {
			t.Fatal(err)
		}
		vs, err := s.SendRuleVersions(ctx, a.ID, r.ID, 10)
		if err != nil || len(vs) != 2 {
			t.Fatalf("versions = %d, %v; want 2: created, and one destination fewer (naming them in another order is no change)", len(vs), err)
		}
		before, _ := vs[0].BeforeRule()
		after, _ := vs[0].AfterRule()
		if !slices.Equal(before.Destinations(), []int64{meta.ID, tiktok.ID}) || !slices.Equal(after.Destinations(), []int64{meta.ID}) {
			t.Errorf("the change's destinations %v → %v; want both → Meta's", before.Destinations(), after.Destinations())
		}
		// The column takes only what the store writes: a row it could not
		// read would stop the account's captures.
		for _, bad := range []string{"not json", "{}", "[1.5]", `["3"]`, "[-1]", "null", ""} {
			q := fmt.Sprintf("UPDATE send_rules SET also_dataset_ids = '%s' WHERE id = %d", bad, r.ID)
			if err := s.ExecSQL(ctx, q); err == nil {
				t.Errorf("also_dataset_ids %q was taken", bad)
			}
		}

		// A rule of one destination snapshots as it did before rules had several.
		if snap := store.SnapshotOf(one).JSON(); strings.Contains(snap, "also_dataset_ids") {
			t.Errorf("snapshot of a one-destination rule %s names also_dataset_ids", snap)
		}
	})
}
