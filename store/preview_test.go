package store_test

import (
	"cmp"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// EachRecentLead reads every lead of the account since a time, in no
// particular order, with every column a rule or an event reads.
func TestEachRecentLead(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		since := now.Add(-7 * 24 * time.Hour)

		full := lead(a, now.Add(-time.Hour), "full@example.com")
		fill := 12.5
		full.ExternalID, full.FillSeconds, full.Partial, full.Junk, full.Test = strp("crm-1"), &fill, true, true, true
		full.Phone, full.PhoneE164, full.PhoneHash, full.City, full.State, full.Zip, full.Country = "+1 415 692 4281", "14156924281", "h-ph", "Austin", "TX", "78701", "US"
		full.Gender, full.DateOfBirth, full.Message, full.FBCLID, full.FBC, full.FBP = "f", "1990-01-31", "Need a roof", "IwAR1", "fb.1.2.IwAR1", "fb.1.2.3"
		full.ClientIP, full.ClientUserAgent, full.EventSourceURL, full.Honeypot, full.MetaLeadID = "203.0.113.7", "Mozilla/5.0", "https://example.com/?utm_source=fb", "x", "ml-1"
		full.Fields, full.MatchKeys, full.JunkReasons, full.Stage = `{"budget":"9000"}`, `{"phone_country":"US"}`, `[{"signal":"honeypot"}]`, "booked"
		full.Source = models.SourceCRM
		if err := s.InsertLead(ctx, &full); err != nil {
			t.Fatal(err)
		}
		older := storedLead(t, s, a, now.Add(-3*24*time.Hour), "older@example.com")
		tie := storedLead(t, s, a, now.Add(-3*24*time.Hour), "tie@example.com")
		storedLead(t, s, a, since.Add(-time.Minute), "too-old@example.com")
		storedLead(t, s, b, now.Add(-time.Hour), "other-account@example.com")

		var got []models.Lead
		err := s.EachRecentLead(ctx, a.ID, since, func(l *models.Lead) error {
			got = append(got, *l)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(got, func(x, y models.Lead) int { return cmp.Compare(x.ID, y.ID) })
		var ids []int64
		for _, l := range got {
			ids = append(ids, l.ID)
		}
		if want := []int64{full.ID, older.ID, tie.ID}; !slices.Equal(ids, want) {
			t.Fatalf("leads %v; want %v (this account, since)", ids, want)
		}
		g := got[0]
		if !g.CreatedAt.Equal(full.CreatedAt) || g.AccountID != a.ID || g.Source != models.SourceCRM || !g.Partial || !g.Junk {
			t.Errorf("first lead %+v", g)
		}
		// The copy's pointers were reused for the leads after it: they are
		// checked while fn runs, below.
		want := full
		want.ReceivedAt, want.UpdatedAt, want.ExternalID, want.FillSeconds, want.CreatedAt = time.Time{}, time.Time{}, nil, nil, g.CreatedAt
		g.ExternalID, g.FillSeconds = nil, nil
		if g != want {
			t.Errorf("lead read\n%+v\nwant\n%+v", g, want)
		}

		// The pointers hold the lead's values while fn runs.
		var ext string
		var secs float64
		_ = s.EachRecentLead(ctx, a.ID, since, func(l *models.Lead) error {
			if l.ID == full.ID && l.ExternalID != nil && l.FillSeconds != nil {
				ext, secs = *l.ExternalID, *l.FillSeconds
			}
			if l.ID == older.ID && (l.ExternalID != nil || l.FillSeconds != nil) {
				t.Errorf("lead without external id or fill time reads %v %v", l.ExternalID, l.FillSeconds)
			}
			return nil
		})
		if ext != "crm-1" || secs != 12.5 {
			t.Errorf("external id %q, fill seconds %v", ext, secs)
		}

		// Inside a transaction it reads the same leads (through the
		// transaction, not pgx's own connection).
		var inTx, wantTx []int64
		if err := s.Tx(ctx, func(tx *store.Store) error {
			fresh := lead(a, now.Add(-time.Minute), "in-tx@example.com")
			if err := tx.InsertLead(ctx, &fresh); err != nil {
				return err
			}
			wantTx = append(slices.Clone(ids), fresh.ID)
			return tx.EachRecentLead(ctx, a.ID, since, func(l *models.Lead) error {
				inTx = append(inTx, l.ID)
				return nil
			})
		}); err != nil {
			t.Fatal(err)
		}
		slices.Sort(inTx)
		if !slices.Equal(inTx, wantTx) {
			t.Errorf("leads read in a transaction %v; want %v, with the one it wrote", inTx, wantTx)
		}

		// fn's error stops the reading and is returned as it is.
		stop := errors.New("stop")
		n := 0
		err = s.EachRecentLead(ctx, a.ID, since, func(*models.Lead) error {
			n++
			return stop
		})
		if !errors.Is(err, stop) || n != 1 {
			t.Errorf("stopping: err %v after %d leads; want stop after 1", err, n)
		}
	})
}

func TestCustomFieldNames(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		add := func(acc models.Account, at time.Time, fields string) {
			l := lead(acc, at, "x@example.com")
			l.Fields = fields
			if err := s.InsertLead(ctx, &l); err != nil {
				t.Fatal(err)
			}
		}
		add(a, now.Add(-time.Hour), `{"budget":"9000","service":"Roofing"}`)
		add(a, now.Add(-2*time.Hour), `{"Budget":"1","zip code":"78701"}`)
		add(a, now.Add(-3*time.Hour), `{}`)
		add(a, now.Add(-40*24*time.Hour), `{"ancient":"x"}`)
		add(b, now.Add(-time.Hour), `{"theirs":"x"}`)
		names, err := s.CustomFieldNames(ctx, a.ID, now.Add(-30*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"Budget", "budget", "service", "zip code"}; !slices.Equal(names, want) {
			t.Errorf("names %q; want %q", names, want)
		}
		if names, err := s.CustomFieldNames(ctx, b.ID+1000, now.Add(-30*24*time.Hour)); err != nil || len(names) != 0 {
			t.Errorf("an account without leads: %q, %v", names, err)
		}
	})
}
