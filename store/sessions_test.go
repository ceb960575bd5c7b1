package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

func TestSessions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		lim := store.SessionLimits{Idle: 12 * time.Hour, Absolute: 14 * 24 * time.Hour}
		t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		ada, _ := s.CreateUser(ctx, "ada@example.com", "h", false)
		bob, _ := s.CreateUser(ctx, "bob@example.com", "h", false)
		add := func(hash string, u *models.User) {
			t.Helper()
			sess := models.Session{IDHash: hash, Data: []byte("v1"), CreatedAt: t0, LastSeenAt: t0}
			if u != nil {
				sess.UserID = &u.ID
			}
			if err := s.CreateSession(ctx, sess); err != nil {
				t.Fatalf("CreateSession(%s): %v", hash, err)
			}
		}
		add("anon", nil)
		add("ada-laptop", &ada)
		add("ada-phone", &ada)
		add("bob", &bob)

		got, err := s.Session(ctx, "ada-laptop", t0.Add(time.Hour), lim)
		if err != nil || got.UserID == nil || *got.UserID != ada.ID || string(got.Data) != "v1" {
			t.Fatalf("Session(ada-laptop) = %+v, %v", got, err)
		}
		if _, err := s.Session(ctx, "nobody", t0, lim); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Session(unknown) err = %v; want ErrNotFound", err)
		}

		// Idle: 12 hours without a request ends it; a touch keeps it.
		if err := s.TouchSession(ctx, "ada-laptop", t0.Add(11*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Session(ctx, "ada-phone", t0.Add(12*time.Hour+time.Second), lim); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("idle session err = %v; want ErrNotFound", err)
		}
		if _, err := s.Session(ctx, "ada-laptop", t0.Add(12*time.Hour+time.Second), lim); err != nil {
			t.Errorf("touched session: %v", err)
		}
		// Absolute: 14 days after it began, however busy.
		if err := s.TouchSession(ctx, "ada-laptop", t0.Add(14*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Session(ctx, "ada-laptop", t0.Add(14*24*time.Hour+time.Second), lim); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("session past its absolute limit err = %v; want ErrNotFound", err)
		}

		// An update keeps created_at and never brings back an ended session.
		upd := models.Session{IDHash: "bob", UserID: &bob.ID, Data: []byte("v2"), CreatedAt: t0.Add(time.Hour), LastSeenAt: t0.Add(2 * time.Hour)}
		if err := s.UpdateSession(ctx, upd); err != nil {
			t.Fatal(err)
		}
		got, _ = s.Session(ctx, "bob", t0.Add(2*time.Hour), lim)
		if string(got.Data) != "v2" || !got.CreatedAt.Equal(t0) {
			t.Errorf("updated session = %+v; want v2, created at %s", got, t0)
		}
		if err := s.DeleteSession(ctx, "bob"); err != nil {
			t.Fatal(err)
		}
		if err := s.UpdateSession(ctx, upd); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("UpdateSession of an ended session err = %v; want ErrNotFound", err)
		}
		if _, err := s.Session(ctx, "bob", t0.Add(2*time.Hour), lim); !errors.Is(err, store.ErrNotFound) {
			t.Error("an ended session came back")
		}

		// Log out everywhere but here.
		add("ada-tablet", &ada)
		if n, err := s.CountUserSessions(ctx, ada.ID, t0, lim); err != nil || n != 3 {
			t.Errorf("CountUserSessions(ada) = %d, %v; want 3", n, err)
		}
		if n, err := s.DeleteUserSessions(ctx, ada.ID, "ada-tablet"); err != nil || n != 2 {
			t.Errorf("DeleteUserSessions(ada, keep tablet) = %d, %v; want 2", n, err)
		}
		if _, err := s.Session(ctx, "ada-tablet", t0, lim); err != nil {
			t.Errorf("the kept session: %v", err)
		}

		// The sweep removes what can no longer be used, and only that.
		if n, err := s.DeleteExpiredSessions(ctx, t0.Add(12*time.Hour+time.Second), lim); err != nil || n != 2 {
			t.Errorf("DeleteExpiredSessions = %d, %v; want the anonymous and the tablet session", n, err)
		}
	})
}

func TestUserChangesEndSessions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		lim := store.SessionLimits{Idle: time.Hour, Absolute: 24 * time.Hour}
		now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		ada, _ := s.CreateUser(ctx, "ada@example.com", "h", false)
		bob, _ := s.CreateUser(ctx, "bob@example.com", "h", false)
		acc, err := s.CreateAccount(ctx, models.Account{Slug: "acme", Name: "Acme", Timezone: "UTC", Currency: "USD"}, ada.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetMember(ctx, acc.ID, bob.ID, models.RoleEditor); err != nil {
			t.Fatal(err)
		}
		login := func(hash string, u models.User) {
			t.Helper()
			if err := s.CreateSession(ctx, models.Session{IDHash: hash, UserID: &u.ID, Data: []byte{}, CreatedAt: now, LastSeenAt: now}); err != nil {
				t.Fatal(err)
			}
		}
		live := func(hash string) bool {
			_, err := s.Session(ctx, hash, now, lim)
			return err == nil
		}

		login("ada-1", ada)
		login("ada-2", ada)
		if err := s.SetUserPassword(ctx, ada.ID, "h2"); err != nil {
			t.Fatal(err)
		}
		if live("ada-1") || live("ada-2") {
			t.Errorf("after a password change: ada-1 live %t, ada-2 live %t; want both ended", live("ada-1"), live("ada-2"))
		}
		login("ada-1", ada)
		if err := s.SetUserPassword(ctx, 999999, "h"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("SetUserPassword(unknown) err = %v; want ErrNotFound", err)
		}

		login("bob-1", bob)
		if err := s.RemoveMember(ctx, acc.ID, bob.ID, ""); err != nil {
			t.Fatal(err)
		}
		if live("bob-1") {
			t.Error("bob's session outlived his removal from the account")
		}

		if err := s.DeleteUser(ctx, ada.ID); !errors.Is(err, store.ErrLastOwner) {
			t.Errorf("DeleteUser(only owner) err = %v; want ErrLastOwner", err)
		}
		if !live("ada-1") {
			t.Error("a refused removal ended the session")
		}
		if err := s.SetMember(ctx, acc.ID, bob.ID, models.RoleOwner); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteUser(ctx, ada.ID); err != nil {
			t.Fatalf("DeleteUser: %v", err)
		}
		if live("ada-1") {
			t.Error("a removed user's session lives on")
		}
		if _, err := s.UserByID(ctx, ada.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("UserByID(removed) err = %v; want ErrNotFound", err)
		}
		if ms, _ := s.Members(ctx, acc.ID); len(ms) != 1 || ms[0].UserID != bob.ID {
			t.Errorf("members after ada's removal = %+v; want bob only", ms)
		}
		if err := s.DeleteUser(ctx, ada.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeleteUser twice err = %v; want ErrNotFound", err)
		}
	})
}

// TestSessionTimesInAnyZone: a server whose clock is not in UTC keeps the
// same limits; SQLite compares times as text.
func TestSessionTimesInAnyZone(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		lim := store.SessionLimits{Idle: 12 * time.Hour, Absolute: 14 * 24 * time.Hour}
		for _, zone := range []string{"America/New_York", "Asia/Tokyo"} {
			loc, err := time.LoadLocation(zone)
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, loc)
			hash := "s-" + zone
			if err := s.CreateSession(ctx, models.Session{IDHash: hash, Data: []byte{}, CreatedAt: t0, LastSeenAt: t0}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Session(ctx, hash, t0.Add(11*time.Hour+59*time.Minute), lim); err != nil {
				t.Errorf("%s: session 11:59 after its last request: %v; want live", zone, err)
			}
			if _, err := s.Session(ctx, hash, t0.Add(12*time.Hour+time.Minute), lim); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s: session 12:01 after its last request: %v; want ended", zone, err)
			}
			if err := s.UpdateSession(ctx, models.Session{IDHash: hash, Data: []byte{}, LastSeenAt: t0.Add(10 * time.Hour)}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Session(ctx, hash, t0.Add(21*time.Hour), lim); err != nil {
				t.Errorf("%s: session 11 hours after an update: %v; want live", zone, err)
			}
		}
	})
}
