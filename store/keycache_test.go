package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// A replica remembers a live key for a few seconds, but sees its own
// changes to keys and accounts at once.
func TestIngestKeyCache(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		_, secret, err := s.CreateIngestKey(ctx, a.ID, "website")
		if err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		if _, _, err := s.IngestKeyAccount(ctx, secret, now); err != nil {
			t.Fatal(err)
		}
		a.DefaultCountry = "DE"
		if _, err := s.UpdateAccountSettings(ctx, a); err != nil {
			t.Fatal(err)
		}
		if got, _, err := s.IngestKeyAccount(ctx, secret, now); err != nil || got.DefaultCountry != "DE" {
			t.Errorf("after a settings change: %q, %v; want DE at once", got.DefaultCountry, err)
		}
		// Inside a transaction the cache is cleared once it commits: a
		// capture meanwhile reads, and caches, the row as it was.
		err = s.Tx(ctx, func(tx *store.Store) error {
			a.DefaultCountry = "FR"
			if _, err := tx.UpdateAccountSettings(ctx, a); err != nil {
				return err
			}
			if got, _, err := s.IngestKeyAccount(ctx, secret, now); err != nil || got.DefaultCountry != "DE" {
				t.Errorf("before the commit: %q, %v; want DE", got.DefaultCountry, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, _, err := s.IngestKeyAccount(ctx, secret, now); err != nil || got.DefaultCountry != "FR" {
			t.Errorf("after the commit: %q, %v; want FR at once", got.DefaultCountry, err)
		}
		if err := s.UpdateJunkSettings(ctx, a.ID, `{"too_fast":{"enabled":false}}`); err != nil {
			t.Fatal(err)
		}
		if got, _, err := s.IngestKeyAccount(ctx, secret, now); err != nil || got.JunkSettings != `{"too_fast":{"enabled":false}}` {
			t.Errorf("after a junk settings change: %q, %v; want the new settings at once", got.JunkSettings, err)
		}
	})
}

// Another replica's revocation is seen once the cached entry expires.
func TestIngestKeyCacheExpires(t *testing.T) {
	t.Parallel()
	url := storetest.MigratedPostgresURL(t)
	open := func() *store.Store {
		s, err := store.Open(context.Background(), store.Options{PostgresURL: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	one, other := open(), open()
	ctx := t.Context()
	a, _ := twoAccounts(t, one)
	k, secret, err := one.CreateIngestKey(ctx, a.ID, "website")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, s := range []*store.Store{one, other} {
		if _, _, err := s.IngestKeyAccount(ctx, secret, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.RevokeIngestKey(ctx, a.ID, k.ID, now); err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.IngestKeyAccount(ctx, secret, now); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoking replica: err = %v; want ErrNotFound", err)
	}
	if _, _, err := one.IngestKeyAccount(ctx, secret, now.Add(time.Second)); err != nil {
		t.Errorf("first replica within the cache's life: %v; want the cached key", err)
	}
	if _, _, err := one.IngestKeyAccount(ctx, secret, now.Add(6*time.Second)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("first replica after 6 s: err = %v; want ErrNotFound", err)
	}
}
