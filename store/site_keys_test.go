package store_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/site"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// A site key is found by its key with its origins and account while it is
// live; origins are added once, removed, and capped; another account's id
// finds nothing; an origin's last use is written at most once a minute.
func TestSiteKeys(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		k, err := s.CreateSiteKey(ctx, a.ID, "Website", []string{"https://www.example.com"}, now)
		if err != nil {
			t.Fatal(err)
		}
		if !site.LooksLikeKey(k.Key) {
			t.Fatalf("key %q", k.Key)
		}
		acc, got, err := s.SiteKeyAccount(ctx, k.Key)
		if err != nil || acc.ID != a.ID || got.ID != k.ID || len(got.Origins) != 1 || got.Origins[0].Origin != "https://www.example.com" {
			t.Fatalf("SiteKeyAccount = %d, %+v, %v", acc.ID, got, err)
		}
		if err := s.AddSiteKeyOrigin(ctx, a.ID, k.ID, "https://shop.example.com", now); err != nil {
			t.Fatal(err)
		}
		if err := s.AddSiteKeyOrigin(ctx, a.ID, k.ID, "https://shop.example.com", now); !errors.Is(err, store.ErrConflict) {
			t.Errorf("the same origin twice: %v; want ErrConflict", err)
		}
		if err := s.AddSiteKeyOrigin(ctx, b.ID, k.ID, "https://evil.example", now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account's key: %v; want ErrNotFound", err)
		}
		if err := s.RemoveSiteKeyOrigin(ctx, b.ID, k.ID, "https://shop.example.com"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account removes an origin: %v; want ErrNotFound", err)
		}
		if _, err := s.SiteKey(ctx, b.ID, k.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account's key: %v; want ErrNotFound", err)
		}
		for i := 2; i < site.MaxOrigins; i++ {
			if err := s.AddSiteKeyOrigin(ctx, a.ID, k.ID, fmt.Sprintf("https://s%d.example.com", i), now); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.AddSiteKeyOrigin(ctx, a.ID, k.ID, "https://one-too-many.example.com", now); !errors.Is(err, store.ErrSiteKeyOrigins) {
			t.Errorf("origin %d: %v; want ErrSiteKeyOrigins", site.MaxOrigins+1, err)
		}
		if err := s.RemoveSiteKeyOrigin(ctx, a.ID, k.ID, "https://shop.example.com"); err != nil {
			t.Fatal(err)
		}

		seen := func() *time.Time {
			k, err := s.SiteKey(ctx, a.ID, k.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range k.Origins {
				if o.Origin == "https://www.example.com" {
					return o.LastSeenAt
				}
			}
			t.Fatal("the origin is gone")
			return nil
		}
		note := func(at time.Time) {
			t.Helper()
			_, live, err := s.SiteKeyAccount(ctx, k.Key)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.NoteSiteKeyOrigin(ctx, live, "https://www.example.com", at); err != nil {
				t.Fatal(err)
			}
		}
		note(now)
		note(now.Add(30 * time.Second))
		if got := seen(); got == nil || !got.Equal(now) {
			t.Errorf("last seen %v; want %v (the second use within a minute is not written)", got, now)
		}
		note(now.Add(2 * time.Minute))
		if got := seen(); got == nil || !got.Equal(now.Add(2*time.Minute)) {
			t.Errorf("last seen %v; want %v", got, now.Add(2*time.Minute))
		}

		if err := s.RevokeSiteKey(ctx, b.ID, k.ID, now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account revokes: %v; want ErrNotFound", err)
		}
		if err := s.RevokeSiteKey(ctx, a.ID, k.ID, now); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.SiteKeyAccount(ctx, k.Key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a revoked key: %v; want ErrNotFound", err)
		}
		if _, _, err := s.SiteKeyAccount(ctx, "pk_nonsense"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a made-up key: %v; want ErrNotFound", err)
		}
		keys, err := s.SiteKeys(ctx, a.ID)
		if err != nil || len(keys) != 1 || keys[0].RevokedAt == nil || len(keys[0].Origins) != site.MaxOrigins-1 {
			t.Errorf("SiteKeys = %+v, %v", keys, err)
		}
		if keys, _ := s.SiteKeys(ctx, b.ID); len(keys) != 0 {
			t.Errorf("the other account has %d site keys", len(keys))
		}
	})
}
