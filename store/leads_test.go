package store_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/decide/decidetest"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

func strp(s string) *string { return &s }

// postgresStore opens a store on a new migrated Postgres database, for a
// test of Postgres alone (a plan, a lock), and returns it with the
// database's URL, for the test's own connections. It closes when the test
// ends.
func postgresStore(t *testing.T) (*store.Store, string) {
	t.Helper()
	url := storetest.MigratedPostgresURL(t)
	s, err := store.Open(t.Context(), store.Options{PostgresURL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, url
}

func twoAccounts(t *testing.T, s *store.Store) (models.Account, models.Account) {
	t.Helper()
	a, err := s.CreateAccount(t.Context(), models.Account{Slug: "acme", Name: "Acme"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.CreateAccount(t.Context(), models.Account{Slug: "beta", Name: "Beta"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

func TestIngestKeys(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

		k, secret, err := s.CreateIngestKey(ctx, a.ID, "website")
		if err != nil {
			t.Fatal(err)
		}
		if k.KeyHash == secret || k.KeyHash != store.HashIngestKey(secret) || len(secret) < 40 {
			t.Fatalf("key %+v with secret %q: want only the hash stored", k, secret)
		}
		acc, keyID, err := s.IngestKeyAccount(ctx, secret, now)
		if err != nil || acc.ID != a.ID || keyID != k.ID {
			t.Fatalf("IngestKeyAccount = %+v, key %d, %v; want key %d", acc, keyID, err, k.ID)
		}
		if ks, _ := s.IngestKeys(ctx, a.ID); len(ks) != 1 || ks[0].ID != k.ID || ks[0].LastUsedAt == nil || !ks[0].LastUsedAt.Equal(now) {
			t.Errorf("after use: %+v; want key %d last used %v", ks, k.ID, now)
		}
		if _, _, err := s.IngestKeyAccount(ctx, secret+"x", now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("wrong secret err = %v; want ErrNotFound", err)
		}
		// Another account cannot revoke it.
		if err := s.RevokeIngestKey(ctx, b.ID, k.ID, now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("revoke from other account err = %v; want ErrNotFound", err)
		}
		if err := s.RevokeIngestKey(ctx, a.ID, k.ID, now); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.IngestKeyAccount(ctx, secret, now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("revoked key err = %v; want ErrNotFound", err)
		}
		ks, _ := s.IngestKeys(ctx, a.ID)
		if len(ks) != 1 || ks[0].RevokedAt == nil {
			t.Errorf("IngestKeys = %+v; want one revoked key", ks)
		}
		if ks, _ := s.IngestKeys(ctx, b.ID); len(ks) != 0 {
			t.Errorf("other account lists %d keys", len(ks))
		}
	})
}

// newDataset connects a dataset to the account.
func newDataset(t *testing.T, s *store.Store, acc models.Account, mode models.Mode) models.Dataset {
	t.Helper()
	d := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: mode, LDU: models.LDUOff}
	if err := s.CreateDataset(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// dueEvent is a Lead event of lead l for dataset d, at time at, due since a
// minute before now.
func dueEvent(d models.Dataset, l models.Lead, id string, at, now time.Time) models.Event {
	return models.Event{AccountID: d.AccountID, DatasetID: d.ID, LeadID: l.ID, Origin: models.OriginDefault,
		EventName: "Lead", EventID: id, EventTime: at, NextAttemptAt: now.Add(-time.Minute)}
}

// enqueue queues events and returns them as stored.
func enqueue(t *testing.T, s *store.Store, evs ...models.Event) []models.Event {
	t.Helper()
	stored, _, err := s.EnqueueEvents(t.Context(), evs)
	if err != nil {
		t.Fatal(err)
	}
	return stored
}

// storedLead stores lead(acc, at, email) and returns it with its id.
func storedLead(t *testing.T, s *store.Store, acc models.Account, at time.Time, email string) models.Lead {
	t.Helper()
	l := lead(acc, at, email)
	if err := s.InsertLead(t.Context(), &l); err != nil {
		t.Fatal(err)
	}
	return l
}

func lead(acc models.Account, at time.Time, email string) models.Lead {
	return models.Lead{AccountID: acc.ID, Source: models.SourceWebsite, Email: email, EmailHash: "h-" + email,
		FirstName: "Jane", LastName: "Doe", CreatedAt: at, ReceivedAt: at, Fields: "{}", MatchKeys: "{}", JunkReasons: "[]"}
}

func TestLeadsExternalIDAndTenancy(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		now := time.Now().UTC()
		l := lead(a, now, "jane@example.com")
		l.ExternalID = strp("form-1")
		if err := s.InsertLead(ctx, &l); err != nil {
			t.Fatal(err)
		}
		dup := lead(a, now, "other@example.com")
		dup.ExternalID = strp("form-1")
		if err := s.InsertLead(ctx, &dup); !errors.Is(err, store.ErrConflict) {
			t.Errorf("same external_id in one account err = %v; want ErrConflict", err)
		}
		other := lead(b, now, "jane@example.com")
		other.ExternalID = strp("form-1")
		if err := s.InsertLead(ctx, &other); err != nil {
			t.Errorf("same external_id in another account: %v", err)
		}
		if _, err := s.Lead(ctx, b.ID, l.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Lead(other account) err = %v; want ErrNotFound", err)
		}
		got, err := s.LeadByExternalID(ctx, a.ID, "form-1")
		if err != nil || got.ID != l.ID {
			t.Errorf("LeadByExternalID = %d, %v; want %d", got.ID, err, l.ID)
		}
	})
}

func TestLeadsListFiltersAndPaging(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		for i := range 25 {
			l := lead(a, base.Add(time.Duration(i)*time.Hour), fmt.Sprintf("user%02d@example.com", i))
			l.Junk = i%5 == 0
			l.Partial = i%2 == 1
			if i == 7 {
				l.Source, l.Phone, l.PhoneE164, l.FirstName = models.SourceCRM, "(415) 692-4281", "14156924281", "Zed"
			}
			if err := s.InsertLead(ctx, &l); err != nil {
				t.Fatal(err)
			}
		}
		otherLead := lead(b, base, "user00@example.com")
		if err := s.InsertLead(ctx, &otherLead); err != nil {
			t.Fatal(err)
		}

		// Keyset pages, newest first, no lead twice, none of the other account.
		var seen []string
		var after *store.LeadCursor
		for {
			page, err := s.Leads(ctx, a.ID, store.LeadFilter{}, after, 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range page {
				seen = append(seen, l.Email)
			}
			if len(page) < 10 {
				break
			}
			last := page[len(page)-1]
			after = &store.LeadCursor{CreatedAt: last.CreatedAt, ID: last.ID}
		}
		if len(seen) != 25 || seen[0] != "user24@example.com" || seen[24] != "user00@example.com" {
			t.Errorf("paged %d leads, first %q last %q; want 25 newest first", len(seen), seen[0], seen[len(seen)-1])
		}

		count := func(f store.LeadFilter) int64 {
			n, err := s.CountLeads(ctx, a.ID, f, 1_000_000)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		tests := []struct {
			name string
			f    store.LeadFilter
			want int64
		}{
			{"all", store.LeadFilter{}, 25},
			{"junk", store.LeadFilter{Junk: "junk"}, 5},
			{"clean", store.LeadFilter{Junk: "clean"}, 20},
			{"partial", store.LeadFilter{Partial: "yes"}, 12},
			{"complete", store.LeadFilter{Partial: "no"}, 13},
			{"source", store.LeadFilter{Source: models.SourceCRM}, 1},
			{"from-to", store.LeadFilter{From: base.Add(10 * time.Hour), To: base.Add(12 * time.Hour)}, 2},
			{"email text", store.LeadFilter{Query: "USER1"}, 10},
			{"name text", store.LeadFilter{Query: "zed doe"}, 1},
			{"email hash", store.LeadFilter{EmailHash: "h-user01@example.com"}, 1},
			{"phone digits", store.LeadFilter{Query: "692-4281"}, 1},
			{"phone digits, written as stored", store.LeadFilter{Query: "14156924281"}, 1},
			{"letters and digits are not a phone number", store.LeadFilter{Query: "zed692"}, 0},
			{"like wildcards are literal", store.LeadFilter{Query: "%"}, 0},
			{"no stage", store.LeadFilter{Stage: "none"}, 25},
			{"stage", store.LeadFilter{Stage: "won"}, 0},
		}
		for _, tt := range tests {
			if got := count(tt.f); got != tt.want {
				t.Errorf("%s: CountLeads = %d; want %d", tt.name, got, tt.want)
			}
		}
		if n, err := s.CountLeads(ctx, a.ID, store.LeadFilter{Partial: "yes"}, 5); err != nil || n != 5 {
			t.Errorf("CountLeads(partial, up to 5) = %d, %v; want it to stop at 5 of 12", n, err)
		}
		var exported int
		if err := s.EachLead(ctx, a.ID, store.LeadFilter{Junk: "junk"}, func(models.Lead) error { exported++; return nil }); err != nil || exported != 5 {
			t.Errorf("EachLead(junk) = %d, %v; want 5", exported, err)
		}
	})
}

func TestStageChanges(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		l := lead(a, now, "jane@example.com")
		l.Junk = true
		if err := s.InsertLead(ctx, &l); err != nil {
			t.Fatal(err)
		}
		add := func(acc int64, stage string, at time.Time) (models.Lead, error) {
			return decidetest.Mark(ctx, s, models.StageChange{AccountID: acc, LeadID: l.ID, Stage: stage, OccurredAt: at})
		}
		got, err := add(a.ID, models.StageNotJunk, now.Add(time.Minute))
		if err != nil || got.Junk || got.JunkOverride != "not_junk" {
			t.Fatalf("not_junk: %+v, %v", got, err)
		}
		got, _ = add(a.ID, models.StageBooked, now.Add(2*time.Hour))
		if got.Stage != models.StageBooked {
			t.Errorf("stage = %q; want booked", got.Stage)
		}
		// A late-arriving older change is history, not the current stage.
		got, _ = add(a.ID, models.StageQualified, now.Add(time.Hour))
		if got.Stage != models.StageBooked {
			t.Errorf("after an older change stage = %q; want booked", got.Stage)
		}
		got, _ = add(a.ID, models.StageJunk, now.Add(3*time.Hour))
		if !got.Junk || got.Stage != models.StageBooked {
			t.Errorf("junk marker: junk %v stage %q", got.Junk, got.Stage)
		}
		if _, err := add(b.ID, models.StageWon, now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("stage change from another account err = %v; want ErrNotFound", err)
		}
		cs, _ := s.StageChanges(ctx, a.ID, l.ID)
		if len(cs) != 4 || cs[0].Stage != models.StageNotJunk || cs[1].Stage != models.StageQualified {
			t.Errorf("history = %+v; want 4 changes in time order", cs)
		}
	})
}
