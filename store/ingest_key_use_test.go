package store_test

import (
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestNoteIngestKeyUse: a key's use is written at most once a minute, only
// for a live key of the account named.
func TestNoteIngestKeyUse(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		k, _, err := s.CreateIngestKey(ctx, a.ID, "website")
		if err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		lastUsed := func() *time.Time {
			t.Helper()
			keys, err := s.IngestKeys(ctx, a.ID)
			if err != nil || len(keys) != 1 {
				t.Fatalf("IngestKeys = %d, %v", len(keys), err)
			}
			return keys[0].LastUsedAt
		}
		if err := s.NoteIngestKeyUse(ctx, b.ID, k.ID, now); err != nil || lastUsed() != nil {
			t.Errorf("another account's use of the key: %v, last used %v; want nothing noted", err, lastUsed())
		}
		for _, tt := range []struct {
			at, want time.Time
		}{
			{now, now},
			{now.Add(59 * time.Second), now},
			{now.Add(time.Minute), now.Add(time.Minute)},
		} {
			if err := s.NoteIngestKeyUse(ctx, a.ID, k.ID, tt.at); err != nil {
				t.Fatal(err)
			}
			if got := lastUsed(); got == nil || !got.Equal(tt.want) {
				t.Errorf("NoteIngestKeyUse at %v: last used %v; want %v", tt.at, got, tt.want)
			}
		}
		if err := s.RevokeIngestKey(ctx, a.ID, k.ID, now); err != nil {
			t.Fatal(err)
		}
		if err := s.NoteIngestKeyUse(ctx, a.ID, k.ID, now.Add(time.Hour)); err != nil || !lastUsed().Equal(now.Add(time.Minute)) {
			t.Errorf("a revoked key's use: %v, last used %v; want nothing noted", err, lastUsed())
		}
	})
}
