package store_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// insertCaptured stores leads as a capture batch does: ids reserved by the
// lookup, events made for the leads with their ids, then leads and events
// in one go.
func insertCaptured(t *testing.T, s *store.Store, ls []models.Lead, eventsFor func([]models.Lead) []models.Event) ([]models.Event, error) {
	t.Helper()
	_, ids, err := s.LookupCapture(t.Context(), nil, len(ls))
	if err != nil || len(ids) != len(ls) {
		t.Fatalf("reserved %v, %v; want %d ids", ids, err, len(ls))
	}
	for i := range ids {
		ls[i].ID = ids[i]
	}
	var evs []models.Event
	if eventsFor != nil {
		evs = eventsFor(ls)
	}
	return evs, s.SaveCaptured(t.Context(), store.Captured{New: ls, Events: evs})
}

// A batch of leads and events is stored whole, every column as given, each
// row under its id.
func TestSaveCaptured(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeDryRun)
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		fill := 7.5
		ls := []models.Lead{lead(a, now.Add(-time.Minute), "one@example.com"), lead(a, now, "two@example.com"), lead(a, now, "three@example.com")}
		ls[0].ExternalID, ls[0].FillSeconds, ls[0].Phone, ls[0].PhoneHash = strp("form-1"), &fill, "+1 202 555 0100", "ph"
		ls[1].Partial, ls[1].Message, ls[1].Fields = true, `Hi "there", it's me`, `{"budget":"5k"}`
		ls[2].Junk, ls[2].JunkReasons, ls[2].Country, ls[2].FBC = true, `["too_fast"]`, "DE", "fb.1.1.abc"
		for i := range ls {
			ls[i].UpdatedAt = now
		}
		value, origin := 120.0, int64(9)
		var given []models.Lead
		evs, err := insertCaptured(t, s, ls, func(stored []models.Lead) []models.Event {
			given = stored
			return []models.Event{
				{AccountID: a.ID, DatasetID: d.ID, LeadID: stored[0].ID, Origin: models.OriginDefault, EventName: "Lead", EventID: "e-1", EventTime: now},
				{AccountID: a.ID, DatasetID: d.ID, LeadID: stored[1].ID, Origin: "stage", OriginID: &origin, EventName: "Purchase", EventID: "e-2", EventTime: now, Value: &value, Currency: "EUR"},
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range given {
			if want.ID == 0 {
				t.Fatalf("lead %d has no id", i)
			}
			got, err := s.Lead(ctx, a.ID, want.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(utcLead(got), utcLead(want)) || got.Email != ls[i].Email {
				t.Errorf("lead %d as stored:\n%+v\nwant\n%+v", want.ID, utcLead(got), utcLead(want))
			}
		}
		for _, want := range evs {
			got, err := s.LeadEvents(ctx, a.ID, want.LeadID)
			if err != nil || len(got) != 1 {
				t.Fatalf("LeadEvents(%d) = %+v, %v; want one event", want.LeadID, got, err)
			}
			if got[0].ID == 0 || got[0].EventID != want.EventID || got[0].Status != models.EventQueued ||
				got[0].Currency != want.Currency || !reflect.DeepEqual(got[0].Value, want.Value) || !reflect.DeepEqual(got[0].OriginID, want.OriginID) {
				t.Errorf("event as stored %+v; want %+v queued", got[0], want)
			}
			if got[0].NextAttemptAt.IsZero() {
				t.Errorf("event %s has no schedule; want it due", got[0].EventID)
			}
		}
		// Both are queued for the dispatcher, due at once.
		if c, err := s.ClaimEvents(ctx, d.ID, time.Now().Add(time.Second), time.Minute, 10, nil); err != nil || len(c.Events) != 2 {
			t.Errorf("claim after capture = %d events, %v; want 2", len(c.Events), err)
		}

		// A taken external_id fails the whole batch, leaving nothing behind.
		again := []models.Lead{lead(a, now, "four@example.com"), lead(a, now, "five@example.com")}
		again[1].ExternalID = strp("form-1")
		if _, err := insertCaptured(t, s, again, nil); !errors.Is(err, store.ErrConflict) {
			t.Errorf("a taken external_id: err = %v; want ErrConflict", err)
		}
		if found, err := s.Leads(ctx, a.ID, store.LeadFilter{Query: "four@example.com"}, nil, 10); err != nil || len(found) != 0 {
			t.Errorf("after a failed batch: %+v, %v; want no lead four", found, err)
		}
	})
}

// A failing events statement takes the leads of the same call with it: on
// Postgres the pipeline's implicit transaction is all that holds them
// together.
func TestSaveCapturedIsAtomic(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		_, err := insertCaptured(t, s, []models.Lead{lead(a, now, "atom@example.com")}, func(stored []models.Lead) []models.Event {
			return []models.Event{{AccountID: a.ID, DatasetID: 999_999, LeadID: stored[0].ID, Origin: models.OriginDefault,
				EventName: "Lead", EventID: "x", EventTime: now}}
		})
		if err == nil {
			t.Fatal("an event of an unknown dataset was stored")
		}
		if found, err := s.Leads(ctx, a.ID, store.LeadFilter{Query: "atom@example.com"}, nil, 10); err != nil || len(found) != 0 {
			t.Errorf("the lead stayed without its event: %d, %v", len(found), err)
		}
	})
}

// utcLead is l with its times in UTC, to compare leads by value.
func utcLead(l models.Lead) models.Lead {
	l.CreatedAt, l.ReceivedAt, l.UpdatedAt = l.CreatedAt.UTC(), l.ReceivedAt.UTC(), l.UpdatedAt.UTC()
	return l
}

// The lookup finds, per account, the external ids taken, the recent
// complete leads with either hash, and the datasets.
func TestLookupCapture(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeLive)
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		old := lead(a, now.Add(-8*24*time.Hour), "old@example.com")
		partial := lead(a, now.Add(-time.Hour), "partial@example.com")
		partial.Partial, partial.ExternalID, partial.Stage, partial.JunkOverride = true, strp("form-p"), "qualified", "not_junk"
		byPhone := lead(a, now.Add(-time.Hour), "phone@example.com")
		byPhone.PhoneHash, byPhone.ExternalID = "p-1", strp("form-1")
		byEmail := lead(a, now.Add(-2*time.Hour), "recent@example.com")
		elsewhere := lead(b, now, "recent@example.com")
		elsewhere.ExternalID = strp("form-b")
		ls := []models.Lead{old, partial, byPhone, byEmail, elsewhere}
		if _, err := insertCaptured(t, s, ls, nil); err != nil {
			t.Fatal(err)
		}
		stored, err := s.LeadByExternalID(ctx, a.ID, "form-1")
		if err != nil {
			t.Fatal(err)
		}
		storedPartial, err := s.LeadByExternalID(ctx, a.ID, "form-p")
		if err != nil {
			t.Fatal(err)
		}

		facts, ids, err := s.LookupCapture(ctx, []store.CaptureQuery{
			{AccountID: a.ID, ExternalIDs: []string{"form-1", "form-p", "form-b", "form-new"},
				EmailHashes: []string{"h-old@example.com", "h-partial@example.com", "h-recent@example.com", "h-nobody"},
				PhoneHashes: []string{"p-1"}, Since: now.Add(-7 * 24 * time.Hour)},
			{AccountID: b.ID},
		}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != 3 || ids[0] <= stored.ID || ids[1] == ids[0] || ids[2] == ids[1] {
			t.Errorf("reserved ids %v; want 3 new ones", ids)
		}
		fa := facts[a.ID]
		wantExisting := map[string]store.ExistingLead{
			"form-1": {ID: stored.ID, ReceivedAt: stored.ReceivedAt.UTC()},
			"form-p": {ID: storedPartial.ID, Partial: true, ReceivedAt: storedPartial.ReceivedAt.UTC(), Stage: "qualified", JunkOverride: "not_junk"},
		}
		for k, l := range fa.Existing {
			l.ReceivedAt = l.ReceivedAt.UTC()
			fa.Existing[k] = l
		}
		if !reflect.DeepEqual(fa.Existing, wantExisting) {
			t.Errorf("existing = %+v; want %+v", fa.Existing, wantExisting)
		}
		for i := range fa.Contacts {
			fa.Contacts[i].CreatedAt = fa.Contacts[i].CreatedAt.UTC()
		}
		wantContacts := []store.Contact{
			{EmailHash: "h-recent@example.com", CreatedAt: now.Add(-2 * time.Hour)},
			{EmailHash: "h-phone@example.com", PhoneHash: "p-1", CreatedAt: now.Add(-time.Hour)},
		}
		if !reflect.DeepEqual(fa.Contacts, wantContacts) {
			t.Errorf("contacts = %+v; want %+v", fa.Contacts, wantContacts)
		}
		if len(fa.Datasets) != 1 || fa.Datasets[0].ID != d.ID || fa.Datasets[0].PixelID != d.PixelID || fa.Datasets[0].Name != d.Name {
			t.Errorf("datasets = %+v; want %d", fa.Datasets, d.ID)
		}
		if fb := facts[b.ID]; len(fb.Existing) != 0 || len(fb.Contacts) != 0 || len(fb.Datasets) != 0 {
			t.Errorf("account b facts = %+v; want none", fb)
		}
	})
}
