package store_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// AccountsForUser lists a member's accounts by name, ignoring case, each
// whole and with the member's role in it; AccountForUser reads one of them,
// and another account's id is ErrNotFound.
func TestAccountsForUser(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		ada, err := s.CreateUser(ctx, "ada@example.com", "h", false)
		if err != nil {
			t.Fatal(err)
		}
		mk := func(slug, name string, owner int64) models.Account {
			t.Helper()
			a, err := s.CreateAccount(ctx, models.Account{Slug: slug, Name: name, Timezone: "Europe/Berlin", Currency: "EUR",
				DefaultCountry: "DE", CRMName: "HubSpot", WebsiteURL: "https://" + slug + ".example", JunkSettings: `{"honeypot":{"enabled":true}}`}, owner)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		zeta := mk("zeta", "zeta roofing", ada.ID)
		acme := mk("acme", "Acme", 0)
		mk("beta", "Beta", ada.ID)
		mk("alpha", "alpha roofing", ada.ID) // after "Beta" byte by byte, before it by name
		other := mk("other", "Other", 0)
		if err := s.SetMember(ctx, acme.ID, ada.ID, models.RoleSales); err != nil {
			t.Fatal(err)
		}

		got, err := s.AccountsForUser(ctx, ada.ID)
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		for _, a := range got {
			order = append(order, fmt.Sprint(a.Slug, "/", a.Role))
		}
		if want := "[acme/sales alpha/owner beta/owner zeta/owner]"; fmt.Sprint(order) != want {
			t.Errorf("accounts = %v; want %s", order, want)
		}
		for _, a := range got {
			whole, err := s.AccountBySlug(ctx, a.Slug)
			if err != nil {
				t.Fatal(err)
			}
			if a.Account.ID != whole.ID || a.Name != whole.Name || a.Timezone != whole.Timezone || a.Currency != whole.Currency ||
				a.DefaultCountry != whole.DefaultCountry || a.CRMName != whole.CRMName || a.WebsiteURL != whole.WebsiteURL ||
				a.JunkSettings != whole.JunkSettings || !a.CreatedAt.Equal(whole.CreatedAt) || !a.UpdatedAt.Equal(whole.UpdatedAt) {
				t.Errorf("%s reads\n%+v\nwant\n%+v", a.Slug, a.Account, whole)
			}
		}

		one, err := s.AccountForUser(ctx, ada.ID, zeta.ID)
		if err != nil || one.ID != zeta.ID || one.Role != models.RoleOwner || one.Name != "zeta roofing" || one.Timezone != "Europe/Berlin" {
			t.Errorf("AccountForUser(zeta) = %+v, %v", one, err)
		}
		if _, err := s.AccountForUser(ctx, ada.ID, other.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("AccountForUser(another account) err = %v; want ErrNotFound", err)
		}
		if _, err := s.AccountForUser(ctx, ada.ID, 0); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("AccountForUser(0) err = %v; want ErrNotFound", err)
		}
		if none, err := s.AccountsForUser(ctx, ada.ID+1000); err != nil || len(none) != 0 {
			t.Errorf("a user without accounts: %+v, %v", none, err)
		}

		// HasAccounts is true for a member of any account, whatever the
		// role, and false for a user of none, one removed from their last
		// and an unknown id.
		bob, err := s.CreateUser(ctx, "bob@example.com", "h", false)
		if err != nil {
			t.Fatal(err)
		}
		has := func(who string, id int64, want bool) {
			t.Helper()
			if got, err := s.HasAccounts(ctx, id); err != nil || got != want {
				t.Errorf("HasAccounts(%s) = %v, %v; want %v", who, got, err, want)
			}
		}
		has("an owner", ada.ID, true)
		has("a user of no account", bob.ID, false)
		has("an unknown id", 0, false)
		if err := s.SetMember(ctx, other.ID, bob.ID, models.RoleViewer); err != nil {
			t.Fatal(err)
		}
		has("a viewer", bob.ID, true)
		if err := s.RemoveMember(ctx, other.ID, bob.ID, ""); err != nil {
			t.Fatal(err)
		}
		has("a removed member", bob.ID, false)
	})
}
