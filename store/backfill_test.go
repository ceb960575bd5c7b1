package store_test

import (
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
		filled, finished := backfillAll(t, s)
		want[0] = ""
		if got := countries(t, s, leads); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("after the backfill, countries = %q; want %q", got, want)
		}
		if filled["0016_lead_phone_country"] != 2 || finished != 1 {
			t.Errorf("batches filled %v, finished %d; want the 2 leads the batches after the first filled, finished once", filled, finished)
		}

		// Done, it is recorded: running it again reads no lead, and
		// finishes nothing.
		late := insertLead(t, s, models.Lead{AccountID: leads[0].AccountID, Source: models.SourceWebsite, PhoneE164: "4930901820",
			MatchKeys: phoneKeys("DE"), Fields: "{}", JunkReasons: "[]"})
		if filled, finished := backfillAll(t, s); len(filled) != 0 || finished != 0 {
			t.Errorf("the backfill again filled %v, finished %d; want nothing", filled, finished)
		}
		if got := countries(t, s, append(leads, late)); strings.Join(got, ",") != strings.Join(append(want, ""), ",") {
			t.Errorf("after the backfill again, countries = %q; want %q", got, append(want, ""))
		}
	})
}

// backfillAll runs BackfillNext until it is done, as serve does, and
// returns the leads its batches filled, by backfill, and how many of them
// finished one.
func backfillAll(t *testing.T, s *store.Store) (map[string]int64, int) {
	t.Helper()
	filled, finished := map[string]int64{}, 0
	for range 1000 {
		step, err := s.BackfillNext(t.Context())
		if err != nil {
			t.Errorf("BackfillNext = %v", err)
			return filled, finished
		}
		if step.Filled > 0 {
			filled[step.Name] += step.Filled
		}
		if step.Finished {
			finished++
		}
		if step.Done {
			return filled, finished
		}
	}
	t.Error("BackfillNext never done")
	return filled, finished
}

// Replicas starting together run the backfill at once: each batch is
// done once, every lead gets its country, and one of them finishes it.
func TestBackfillConcurrent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		store.SetBackfillBatch(t, 2)
		leads, want := oldLeads(t, s)
		var wg sync.WaitGroup
		finished := make([]int, 4)
		for i := range finished {
			wg.Go(func() { _, finished[i] = backfillAll(t, s) })
		}
		wg.Wait()
		if got := countries(t, s, leads); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("countries = %q; want %q", got, want)
		}
		if n := finished[0] + finished[1] + finished[2] + finished[3]; n != 1 {
			t.Errorf("replicas finished the backfill %d times; want once", n)
		}
	})
}

// A database where the backfill has nothing to fill (new, or migrated by
// the first 0016) finishes it in one batch.
func TestBackfillNothingToDo(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		if step, err := s.BackfillNext(t.Context()); err != nil || !step.Finished || !step.Done || step.Filled != 0 {
			t.Fatalf("BackfillNext = %+v, %v; want it finished and done, nothing filled", step, err)
		}
		if done, err := s.BackfillBatch(t.Context()); err != nil || !done {
			t.Errorf("BackfillBatch after the backfill = %v, %v; want done", done, err)
		}
	})
}
