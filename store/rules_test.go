package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// A dataset comes with its default rule; rules are created, changed,
// moved and deleted within their account, each change kept as a version
// with who made it.
func TestSendRules(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeLive)
		other := newDataset(t, s, b, models.ModeLive)
		ada, err := s.CreateUser(ctx, "ada@example.com", "h", false)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := s.SendRules(ctx, a.ID)
		if err != nil || len(rs) != 1 || rs[0].DatasetID != d.ID || rs[0].Mode != "automatic_completed" || rs[0].EventName != "Lead" ||
			!rs[0].Enabled || rs[0].Name != "Completed leads to "+d.Name {
			t.Fatalf("a new dataset's rules = %+v, %v; want its default rule", rs, err)
		}
		def := rs[0]

		r := models.SendRule{AccountID: a.ID, DatasetID: d.ID, Name: "Big budgets", Mode: "automatic_match", EventName: "QualifiedLead",
			Combinator: "or", Conditions: `[{"field":"fields.budget","match_type":"gt","pattern":"1000"}]`, Enabled: true}
		if err := s.CreateSendRule(ctx, &r, &ada.ID); err != nil {
			t.Fatal(err)
		}
		dup := r
		dup.Name = "BIG BUDGETS"
		if err := s.CreateSendRule(ctx, &dup, &ada.ID); !errors.Is(err, store.ErrConflict) {
			t.Errorf("a second rule named %q: %v; want ErrConflict", dup.Name, err)
		}
		foreign := r
		foreign.Name, foreign.DatasetID = "Elsewhere", other.ID
		if err := s.CreateSendRule(ctx, &foreign, &ada.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a rule for another account's dataset: %v; want ErrNotFound", err)
		}

		r.EventName = "Contact"
		if err := s.SaveSendRule(ctx, &r, &ada.ID); err != nil {
			t.Fatal(err)
		}
		same := r
		if err := s.SaveSendRule(ctx, &same, &ada.ID); err != nil {
			t.Fatal(err)
		}
		vs, err := s.SendRuleVersions(ctx, a.ID, r.ID, 10)
		if err != nil || len(vs) != 2 {
			t.Fatalf("versions = %+v, %v; want 2 (created, changed; an unchanged save records none)", vs, err)
		}
		if vs[0].Email != "ada@example.com" || !strings.Contains(vs[0].Before, `"QualifiedLead"`) || !strings.Contains(vs[0].After, `"Contact"`) || vs[1].Before != "" {
			t.Errorf("versions = %+v; want the change by ada, newest first, then the creation", vs)
		}
		if _, err := s.SendRule(ctx, b.ID, r.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account reads the rule: %v; want ErrNotFound", err)
		}
		stolen := r
		stolen.AccountID = b.ID
		if err := s.SaveSendRule(ctx, &stolen, nil); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account saves the rule: %v; want ErrNotFound", err)
		}

		if err := s.MoveSendRule(ctx, a.ID, r.ID, -1); err != nil {
			t.Fatal(err)
		}
		if rs, _ := s.SendRules(ctx, a.ID); len(rs) != 2 || rs[0].ID != r.ID || rs[1].ID != def.ID {
			t.Errorf("order after moving up = %v; want the new rule first", rs)
		}
		if err := s.MoveSendRule(ctx, b.ID, r.ID, 1); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account moves the rule: %v; want ErrNotFound", err)
		}

		if err := s.DeleteSendRule(ctx, b.ID, r.ID, nil); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account deletes the rule: %v; want ErrNotFound", err)
		}
		if err := s.DeleteSendRule(ctx, a.ID, r.ID, &ada.ID); err != nil {
			t.Fatal(err)
		}
		if rs, _ := s.SendRules(ctx, a.ID); len(rs) != 1 {
			t.Errorf("rules after delete = %v; want the default only", rs)
		}
		if vs, _ := s.SendRuleVersions(ctx, a.ID, r.ID, 10); len(vs) != 3 || vs[0].After != "" {
			t.Errorf("versions after delete = %+v; want a third, deleting it", vs)
		}
	})
}
