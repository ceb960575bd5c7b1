package store_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		applied, err := s.Migrate(t.Context())
		if err != nil {
			t.Fatalf("second Migrate: %v", err)
		}
		if len(applied) != 0 {
			t.Errorf("second Migrate applied %v; want nothing", applied)
		}
	})
}

func TestConcurrentMigrationsOnPostgres(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			s, err := store.Open(t.Context(), store.Options{PostgresURL: url})
			if err != nil {
				errs[i] = err
				return
			}
			defer s.Close()
			_, errs[i] = s.Migrate(t.Context())
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
}

func TestUsers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u, err := s.CreateFirstAdmin(ctx, "  Ada@Example.com ", "hash")
		if err != nil {
			t.Fatalf("CreateFirstAdmin: %v", err)
		}
		if !u.IsAdmin || u.Email != "ada@example.com" {
			t.Errorf("first admin = %+v; want admin ada@example.com", u)
		}
		if _, err := s.CreateFirstAdmin(ctx, "eve@example.com", "hash"); !errors.Is(err, store.ErrUsersExist) {
			t.Errorf("second CreateFirstAdmin err = %v; want ErrUsersExist", err)
		}
		if _, err := s.CreateUser(ctx, "ADA@example.com", "hash", false); !errors.Is(err, store.ErrConflict) {
			t.Errorf("duplicate email err = %v; want ErrConflict", err)
		}
		got, err := s.UserByEmail(ctx, "ADA@EXAMPLE.COM")
		if err != nil || got.ID != u.ID {
			t.Errorf("UserByEmail = %+v, %v; want user %d", got, err, u.ID)
		}
		if _, err := s.UserByEmail(ctx, "nobody@example.com"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("UserByEmail(unknown) err = %v; want ErrNotFound", err)
		}
	})
}

func TestFirstAdminRace(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		var wg sync.WaitGroup
		wins := make(chan string, 8)
		for i := range 8 {
			wg.Go(func() {
				email := string(rune('a'+i)) + "@example.com"
				if _, err := s.CreateFirstAdmin(t.Context(), email, "hash"); err == nil {
					wins <- email
				} else if !errors.Is(err, store.ErrUsersExist) {
					t.Errorf("CreateFirstAdmin(%s): %v", email, err)
				}
			})
		}
		wg.Wait()
		close(wins)
		if n := len(wins); n != 1 {
			t.Errorf("%d setups won; want exactly 1", n)
		}
	})
}

func TestAccountsAndMembership(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		ada, _ := s.CreateUser(ctx, "ada@example.com", "h", false)
		bob, _ := s.CreateUser(ctx, "bob@example.com", "h", false)

		a, err := s.CreateAccount(ctx, models.Account{Slug: "acme", Name: "Acme", Timezone: "UTC", Currency: "USD"}, ada.ID)
		if err != nil {
			t.Fatalf("CreateAccount: %v", err)
		}
		if _, err := s.CreateAccount(ctx, models.Account{Slug: "acme", Name: "Other"}, 0); !errors.Is(err, store.ErrConflict) {
			t.Errorf("duplicate slug err = %v; want ErrConflict", err)
		}
		b, _ := s.CreateAccount(ctx, models.Account{Slug: "beta", Name: "Beta"}, bob.ID)

		got, err := s.AccountForUser(ctx, ada.ID, a.ID)
		if err != nil || got.Role != models.RoleOwner || got.Slug != "acme" {
			t.Errorf("AccountForUser(ada, acme) = %+v, %v; want owner of acme", got, err)
		}
		if _, err := s.AccountForUser(ctx, ada.ID, b.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("AccountForUser(ada, beta) err = %v; want ErrNotFound", err)
		}

		if err := s.SetMember(ctx, a.ID, bob.ID, models.RoleViewer); err != nil {
			t.Fatalf("SetMember: %v", err)
		}
		list, err := s.AccountsForUser(ctx, bob.ID)
		if err != nil || len(list) != 2 || list[0].Slug != "acme" || list[0].Role != models.RoleViewer || list[1].Role != models.RoleOwner {
			t.Errorf("AccountsForUser(bob) = %+v, %v; want acme viewer, beta owner", list, err)
		}

		if err := s.SetMember(ctx, a.ID, ada.ID, models.RoleEditor); !errors.Is(err, store.ErrLastOwner) {
			t.Errorf("demote last owner err = %v; want ErrLastOwner", err)
		}
		if err := s.RemoveMember(ctx, a.ID, ada.ID, ""); !errors.Is(err, store.ErrLastOwner) {
			t.Errorf("remove last owner err = %v; want ErrLastOwner", err)
		}
		if err := s.SetMember(ctx, a.ID, bob.ID, models.RoleOwner); err != nil {
			t.Fatalf("promote bob: %v", err)
		}
		if err := s.RemoveMember(ctx, a.ID, ada.ID, ""); err != nil {
			t.Errorf("remove ada with bob owner: %v", err)
		}
		ms, _ := s.Members(ctx, a.ID)
		if len(ms) != 1 || ms[0].Email != "bob@example.com" {
			t.Errorf("Members = %+v; want only bob", ms)
		}

		a.Name, a.Timezone, a.DefaultCountry, a.Currency, a.CRMName = "Acme Inc", "Europe/Berlin", "DE", "EUR", "HubSpot"
		upd, err := s.UpdateAccountSettings(ctx, a)
		if err != nil || upd.Name != "Acme Inc" || upd.DefaultCountry != "DE" || upd.CRMName != "HubSpot" {
			t.Errorf("UpdateAccountSettings = %+v, %v", upd, err)
		}
	})
}
