package store_test

import (
	"errors"
	"testing"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// AppendStage adds a stage after the account's last, in that account
// only, and refuses a name the account has in any case.
func TestAppendStage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		st, err := s.AppendStage(ctx, a.ID, "Proposal")
		if err != nil {
			t.Fatal(err)
		}
		if st.ID == 0 || st.AccountID != a.ID || st.Position != len(store.TemplateStages)+1 {
			t.Errorf("AppendStage = %+v; want a new stage after the template's", st)
		}
		ss, err := s.Stages(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, x := range ss {
			names = append(names, x.Name)
		}
		if want := []string{"qualified", "booked", "won", "Proposal"}; len(names) != len(want) || names[3] != "Proposal" {
			t.Errorf("stages = %q; want %q", names, want)
		}
		for _, n := range []string{"proposal", "WON"} {
			if _, err := s.AppendStage(ctx, a.ID, n); !errors.Is(err, store.ErrConflict) {
				t.Errorf("AppendStage(%q) err = %v; want ErrConflict", n, err)
			}
		}
		if ss, _ := s.Stages(ctx, b.ID); len(ss) != len(store.TemplateStages) {
			t.Errorf("beta's stages = %+v; want the template's only", ss)
		}
	})
}
