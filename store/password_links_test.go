package store_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestInviteAndPasswordLinks: an invite creates the user without a
// password; their link works once, until it expires, and a new link voids
// the old one.
func TestInviteAndPasswordLinks(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		ada, acc := adaAndAcme(t, s)

		bob, err := s.InviteMember(ctx, acc.ID, "Bob@Example.com", models.RoleEditor)
		if err != nil || bob.Email != "bob@example.com" || bob.PasswordHash != "" {
			t.Fatalf("InviteMember(new) = %+v, %v; want a user without a password", bob, err)
		}
		if got, err := s.AccountForUser(ctx, bob.ID, acc.ID); err != nil || got.Role != models.RoleEditor {
			t.Errorf("bob's access = %+v, %v; want editor", got, err)
		}
		if _, err := s.InviteMember(ctx, acc.ID, "bob@example.com", models.RoleOwner); !errors.Is(err, store.ErrAlreadyMember) {
			t.Errorf("InviteMember(member) err = %v; want ErrAlreadyMember", err)
		}
		if got, _ := s.AccountForUser(ctx, bob.ID, acc.ID); got.Role != models.RoleEditor {
			t.Errorf("a second invite changed the role to %s", got.Role)
		}
		pending, err := s.MembersWithoutPassword(ctx, acc.ID)
		if err != nil || !pending[bob.ID] || pending[ada.ID] {
			t.Errorf("MembersWithoutPassword = %v, %v; want bob only", pending, err)
		}

		old, err := s.CreatePasswordLink(ctx, bob.ID, &acc.ID, t0)
		if err != nil {
			t.Fatal(err)
		}
		token, err := s.CreatePasswordLink(ctx, bob.ID, &acc.ID, t0)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.PasswordLink(ctx, old, t0); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the voided link: %v; want ErrNotFound", err)
		}
		if _, _, err := s.PasswordLink(ctx, token, t0.Add(store.PasswordLinkTTL)); !errors.Is(err, store.ErrLinkExpired) {
			t.Errorf("the link at its expiry: %v; want ErrLinkExpired", err)
		}
		l, u, err := s.UsePasswordLink(ctx, token, "new-hash", t0.Add(time.Hour))
		if err != nil || u.ID != bob.ID || l.AccountID == nil || *l.AccountID != acc.ID {
			t.Fatalf("UsePasswordLink = %+v %+v, %v", l, u, err)
		}
		if got, _ := s.UserByID(ctx, bob.ID); got.PasswordHash != "new-hash" {
			t.Errorf("password hash = %q; want new-hash", got.PasswordHash)
		}
		if _, _, err := s.UsePasswordLink(ctx, token, "again", t0.Add(time.Hour)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the link used twice: %v; want ErrNotFound", err)
		}

		// Removing a user takes their link with them.
		cy, _ := s.InviteMember(ctx, acc.ID, "cy@example.com", models.RoleViewer)
		cyToken, _ := s.CreatePasswordLink(ctx, cy.ID, &acc.ID, t0)
		if err := s.DeleteUser(ctx, cy.ID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.PasswordLink(ctx, cyToken, t0); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a removed user's link: %v; want ErrNotFound", err)
		}
	})
}

// TestPasswordLinkUsedOnceAtOnce: of several uses of one link at the same
// moment, exactly one sets the password; the others find the link gone.
func TestPasswordLinkUsedOnceAtOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		_, acc := adaAndAcme(t, s)
		bob, err := s.InviteMember(ctx, acc.ID, "bob@example.com", models.RoleEditor)
		if err != nil {
			t.Fatal(err)
		}
		// Rounds, so that the uses overlap at least once whatever the
		// machine's timing.
		for round := range 20 {
			token, err := s.CreatePasswordLink(ctx, bob.ID, &acc.ID, t0)
			if err != nil {
				t.Fatal(err)
			}
			const n = 8
			errs := make([]error, n)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					<-start
					_, _, errs[i] = s.UsePasswordLink(ctx, token, fmt.Sprint("hash-", round, "-", i), t0)
				})
			}
			close(start)
			wg.Wait()
			won := -1
			for i, err := range errs {
				switch {
				case err == nil && won >= 0:
					t.Fatalf("round %d: uses %d and %d both set the password", round, won, i)
				case err == nil:
					won = i
				case !errors.Is(err, store.ErrNotFound):
					t.Fatalf("round %d: use %d: %v; want ErrNotFound", round, i, err)
				}
			}
			if won < 0 {
				t.Fatalf("round %d: no use set the password", round)
			}
			if got, _ := s.UserByID(ctx, bob.ID); got.PasswordHash != fmt.Sprint("hash-", round, "-", won) {
				t.Fatalf("round %d: password hash = %q; want the winner's, use %d", round, got.PasswordHash, won)
			}
		}
	})
}

// adaAndAcme makes the user Ada, with a password, and her account Acme.
func adaAndAcme(t *testing.T, s *store.Store) (models.User, models.Account) {
	t.Helper()
	ada, err := s.CreateUser(t.Context(), "ada@example.com", "h", false)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := s.CreateAccount(t.Context(), models.Account{Slug: "acme", Name: "Acme", Timezone: "UTC", Currency: "USD"}, ada.ID)
	if err != nil {
		t.Fatal(err)
	}
	return ada, acc
}
