package store_test

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// phoneKeys are match keys of a phone that parsed in region.
func phoneKeys(region string) string {
	return `{"em":{"normalized":"a@b.com","hash":"e"},"ph":{"normalized":"4930901820","hash":"p"},"phone_country":"` + region + `"}`
}

// oldLeads stores leads as they were before migration 0016, without a
// phone country, but for the one the first 0016 filled, and returns them
// in id order with the country the backfill must give each.
func oldLeads(t *testing.T, s *store.Store) ([]models.Lead, []string) {
	t.Helper()
	acc, err := s.CreateAccount(t.Context(), models.Account{Slug: "acme", Name: "Acme", Timezone: "UTC", Currency: "USD"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		e164, keys, country, want string
	}{
		{"4930901820", phoneKeys("DE"), "", "DE"},
		{"16502530000", phoneKeys("US"), "", "US"},
		{"", `{"em":{"normalized":"a@b.com","hash":"e"}}`, "", ""}, // no phone
		{"4930901820", phoneKeys("DE"), "AT", "AT"},                // filled already: left alone
		{"4930901820", `{"ph":{"normalized":"4930901820","hash":"p"}}`, "", ""},
		{"14162223333", phoneKeys("CA"), "", "CA"},
		{"33142685300", phoneKeys("FR"), "", "FR"},
	}
	var leads []models.Lead
	var want []string
	for _, r := range rows {
		l := models.Lead{AccountID: acc.ID, Source: models.SourceWebsite, Email: "a@b.com", PhoneE164: r.e164,
			PhoneCountry: r.country, MatchKeys: r.keys, Fields: "{}", JunkReasons: "[]"}
		leads = append(leads, insertLead(t, s, l))
		want = append(want, r.want)
	}
	return leads, want
}

// insertLead stores l and returns it as stored.
func insertLead(t *testing.T, s *store.Store, l models.Lead) models.Lead {
	t.Helper()
	if err := s.InsertLead(t.Context(), &l); err != nil {
		t.Fatal(err)
	}
	stored, err := s.Lead(t.Context(), l.AccountID, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	return stored
}

// countries reads the phone country of each lead.
func countries(t *testing.T, s *store.Store, leads []models.Lead) []string {
	t.Helper()
	var got []string
	for _, l := range leads {
		stored, err := s.Lead(t.Context(), l.AccountID, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !stored.UpdatedAt.Equal(l.UpdatedAt) {
			t.Errorf("lead %d updated_at = %v; want %v: a backfill changes no lead", l.ID, stored.UpdatedAt, l.UpdatedAt)
		}
		got = append(got, stored.PhoneCountry)
	}
	return got
}

func TestBackfillPhoneCountry(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		store.SetBackfillBatch(t, 2)
		leads, want := oldLeads(t, s)

		// One batch: the first two leads, and no other.
		if done, err := s.BackfillBatch(ctx); err != nil || done {
			t.Fatalf("BackfillBatch = %v, %v; want more to do", done, err)
		}
		got := countries(t, s, leads)
		if first := []string{"DE", "US", "", "AT", "", "", ""}; strings.Join(got, ",") != strings.Join(first, ",") {
			t.Errorf("after one batch, countries = %q; want %q", got, first)
		}

		// Stopped there, it goes on from there: a lead before its place
		// is not read again.
		leads[0].PhoneCountry = ""
		if err := s.SaveLead(ctx, &leads[0]); err != nil {
			t.Fatal(err)
		}
		if stored, err := s.Lead(ctx, leads[0].AccountID, leads[0].ID); err != nil {
			t.Fatal(err)
		} else {
			leads[0].UpdatedAt = stored.UpdatedAt
		}
		var log bytes.Buffer
		if err := s.Backfill(ctx, slog.New(slog.NewJSONHandler(&log, nil))); err != nil {
			t.Fatalf("Backfill = %v", err)
		}
		want[0] = ""
		if got := countries(t, s, leads); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("after Backfill, countries = %q; want %q", got, want)
		}
		if !strings.Contains(log.String(), `"msg":"backfilled","backfill":"0016_lead_phone_country","leads":2`) {
			t.Errorf("log = %s; want backfilled with the 2 leads the batches after the first filled", log.String())
		}

		// Done, it is recorded: running it again reads no lead, and says
		// nothing.
		late := insertLead(t, s, models.Lead{AccountID: leads[0].AccountID, Source: models.SourceWebsite, PhoneE164: "4930901820",
			MatchKeys: phoneKeys("DE"), Fields: "{}", JunkReasons: "[]"})
		log.Reset()
		if err := s.Backfill(ctx, slog.New(slog.NewJSONHandler(&log, nil))); err != nil || log.Len() != 0 {
			t.Errorf("Backfill again = %v, log %q; want nil and nothing logged", err, log.String())
		}
		if got := countries(t, s, append(leads, late)); strings.Join(got, ",") != strings.Join(append(want, ""), ",") {
			t.Errorf("after Backfill again, countries = %q; want %q", got, append(want, ""))
		}
	})
}

// Replicas starting together run the backfill at once: each batch is
// done once, every lead gets its country, and one of them logs the end.
func TestBackfillConcurrent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		store.SetBackfillBatch(t, 2)
		leads, want := oldLeads(t, s)
		var (
			log bytes.Buffer
			wg  sync.WaitGroup
		)
		logger := slog.New(slog.NewJSONHandler(&log, nil))
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() { errs[i] = s.Backfill(t.Context(), logger) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("Backfill %d = %v", i, err)
			}
		}
		if got := countries(t, s, leads); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("countries = %q; want %q", got, want)
		}
		if n := strings.Count(log.String(), `"backfilled"`); n != 1 {
			t.Errorf("log says backfilled %d times; want once:\n%s", n, log.String())
		}
	})
}

// A database where the backfill has nothing to fill (new, or migrated by
// the first 0016) finishes it in one batch.
func TestBackfillNothingToDo(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		if err := s.Backfill(t.Context(), slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
			t.Fatalf("Backfill = %v", err)
		}
		if done, err := s.BackfillBatch(t.Context()); err != nil || !done {
			t.Errorf("BackfillBatch after Backfill = %v, %v; want done", done, err)
		}
	})
}
