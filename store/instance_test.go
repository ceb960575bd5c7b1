package store_test

import (
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestPublicURL: the address an administrator saves is the public URL
// until it is cleared, and LEADSIGNAL_PUBLIC_URL, when set, wins over it; a
// save is seen at once, and survives its author's removal.
func TestPublicURL(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		want := func(when, env, url string) {
			t.Helper()
			if got, err := s.PublicURL(ctx, env); err != nil || got != url {
				t.Errorf("%s: PublicURL(%q) = %q, %v; want %q", when, env, got, err, url)
			}
		}
		want("nothing saved", "", "")
		want("nothing saved, the env var set", "https://env.example.com", "https://env.example.com")

		admin, err := s.CreateUser(ctx, "admin@example.com", "x", true)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		if err := s.SavePublicURL(ctx, "https://leads.example.com", admin.ID, now); err != nil {
			t.Fatal(err)
		}
		want("saved", "", "https://leads.example.com")
		want("saved, the env var set", "https://env.example.com", "https://env.example.com")
		if err := s.SavePublicURL(ctx, "https://other.example.com", admin.ID, now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		want("saved again", "", "https://other.example.com")
		set, err := s.InstanceSettings(ctx)
		if err != nil || set.UpdatedBy == nil || *set.UpdatedBy != admin.ID || !set.UpdatedAt.Equal(now.Add(time.Minute)) {
			t.Errorf("InstanceSettings = %+v, %v; want saved by %d at %v", set, err, admin.ID, now.Add(time.Minute))
		}

		// Inside a transaction the cache is cleared once it commits.
		err = s.Tx(ctx, func(tx *store.Store) error {
			return tx.SavePublicURL(ctx, "http://10.0.0.5:8080", admin.ID, now)
		})
		if err != nil {
			t.Fatal(err)
		}
		want("saved in a transaction", "", "http://10.0.0.5:8080")

		if err := s.DeleteUser(ctx, admin.ID); err != nil {
			t.Fatal(err)
		}
		want("its author removed", "", "http://10.0.0.5:8080")
	})
}
