package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// Every lease is fenced by its token: once it ran out and a second
// replica took the rows over, the first holder's late writes change
// nothing, and it learns so (ErrLeaseLost). One test per kind of lease:
// an upload's pass, CRM deliveries, events (TestSettleAfterTheLeaseRanOut
// ChangesNothing) and a held dataset's probe.

// A second replica takes over an upload whose lease ran out: the first
// one's late progress save changes nothing, and the second one's counts.
func TestUploadLeaseTakenOver(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		u := models.StageUpload{AccountID: a.ID, FileName: "won.csv", Header: "[]", Mapping: "{}", Status: models.UploadMapping,
			TotalRows: 3000, EventCounts: "{}", CreatedAt: now, UpdatedAt: now}
		if err := s.CreateStageUpload(ctx, &u, "email,stage\n"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.StartStageUpload(ctx, a.ID, u.ID, "{}", models.UploadApplying, []models.StageUploadStatus{models.UploadMapping}, now); err != nil {
			t.Fatal(err)
		}
		const lease = 2 * time.Minute
		first, err := s.ClaimStageUpload(ctx, u.ID, now, lease)
		if err != nil {
			t.Fatal(err)
		}
		chunk := func(holder models.StageUpload, done, applied int, at time.Time) store.UploadProgress {
			return store.UploadProgress{ID: u.ID, Lease: *holder.LeaseToken, DoneRows: done, Applied: applied, Events: applied,
				EventCounts: `{"Purchase":1}`, LeaseUntil: at.Add(lease),
				Problems: []models.StageUploadProblem{{RowNumber: done + 1, Field: "stage", Message: "by " + holder.FileName}}}
		}
		if err := s.SaveUploadProgress(ctx, chunk(first, 1000, 1000, now), now); err != nil {
			t.Fatalf("the first replica's first chunk: %v", err)
		}

		// The first replica stalls past its lease; the second takes over.
		late := now.Add(lease + time.Second)
		second, err := s.ClaimStageUpload(ctx, u.ID, late, lease)
		if err != nil {
			t.Fatalf("claim after the lease ran out: %v", err)
		}
		if *second.LeaseToken == *first.LeaseToken {
			t.Fatal("the second claim has the first one's token")
		}
		if err := s.SaveUploadProgress(ctx, chunk(first, 2000, 2000, late), late); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("the first replica's late save: %v; want ErrLeaseLost", err)
		}
		got, err := s.StageUpload(ctx, a.ID, u.ID)
		if err != nil || got.DoneRows != 1000 || got.Applied != 1000 || *got.LeaseToken != *second.LeaseToken {
			t.Fatalf("after the late save: %d rows done, %d applied, token %v, %v; want the first chunk's counts and the second's lease",
				got.DoneRows, got.Applied, got.LeaseToken, err)
		}
		if ps, _ := s.StageUploadProblems(ctx, a.ID, u.ID, 10); len(ps) != 1 {
			t.Errorf("%d problems kept; want the first chunk's one", len(ps))
		}
		// The first replica's failure, too, changes nothing.
		fail := store.UploadProgress{ID: u.ID, Lease: *first.LeaseToken, Finished: true, Status: models.UploadFailed, Error: "gone"}
		if err := s.SaveUploadProgress(ctx, fail, late); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("the first replica marking it failed: %v; want ErrLeaseLost", err)
		}

		p := chunk(second, 3000, 3000, late)
		p.Finished, p.Status = true, models.UploadDone
		if err := s.SaveUploadProgress(ctx, p, late); err != nil {
			t.Fatalf("the second replica's save: %v", err)
		}
		if got, _ := s.StageUpload(ctx, a.ID, u.ID); got.Status != models.UploadDone || got.DoneRows != 3000 || got.LeaseToken != nil {
			t.Errorf("after the second replica: %s, %d rows, token %v; want done, 3000, no lease", got.Status, got.DoneRows, got.LeaseToken)
		}
	})
}

// A second worker takes over CRM deliveries whose lease ran out: the first
// one's late outcome is written only for the delivery it still holds.
func TestDeliveryLeaseTakenOver(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		c := models.CRMConnection{AccountID: a.ID, Kind: "generic", Name: "Zap"}
		if err := s.CreateCRMConnection(ctx, &c); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		ds := []models.CRMDelivery{
			{AccountID: a.ID, ConnectionID: c.ID, Key: "k1", Body: "{}", ReceivedAt: now, CRMStageID: "won", OccurredAt: now},
			{AccountID: a.ID, ConnectionID: c.ID, Key: "k2", Body: "{}", ReceivedAt: now.Add(time.Second), CRMStageID: "won", OccurredAt: now},
		}
		if _, err := s.AddCRMDeliveries(ctx, ds); err != nil {
			t.Fatal(err)
		}
		at := now.Add(time.Minute)
		first, err := s.ClaimCRMDeliveries(ctx, at, 10)
		if err != nil || len(first) != 2 {
			t.Fatalf("first claim: %d, %v; want both", len(first), err)
		}
		if again, err := s.ClaimCRMDeliveries(ctx, at.Add(4*time.Minute), 10); err != nil || len(again) != 0 {
			t.Fatalf("a claim under the lease: %d, %v; want none", len(again), err)
		}
		// Past the lease, a second worker takes the oldest over.
		late := at.Add(5*time.Minute + time.Second)
		second, err := s.ClaimCRMDeliveries(ctx, late, 1)
		if err != nil || len(second) != 1 || second[0].ID != first[0].ID {
			t.Fatalf("second claim: %+v, %v; want the first delivery", second, err)
		}
		for i := range first {
			first[i].Status, first[i].Attempts, first[i].Reason = models.DeliveryGaveUp, 1, "late"
			first[i].TriedAt = &at
		}
		if err := s.FinishCRMDeliveries(ctx, first); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("the first worker's late finish: %v; want ErrLeaseLost", err)
		}
		got, err := s.CRMDeliveries(ctx, a.ID, c.ID, 0, 10) // newest first
		if err != nil || len(got) != 2 {
			t.Fatalf("deliveries: %d, %v", len(got), err)
		}
		if got[1].Status != models.DeliveryWaiting || got[1].Attempts != 0 || got[1].LeaseToken == nil || *got[1].LeaseToken != *second[0].LeaseToken {
			t.Errorf("the delivery taken over: %s after %d attempts, lease %v; want waiting, untried, the second worker's", got[1].Status,
				got[1].Attempts, got[1].LeaseToken)
		}
		if got[0].Status != models.DeliveryGaveUp || got[0].Reason != "late" || got[0].LeaseUntil != nil {
			t.Errorf("the delivery the first worker still held: %s %q, lease until %v; want its outcome written, the lease ended",
				got[0].Status, got[0].Reason, got[0].LeaseUntil)
		}
		second[0].Status, second[0].Attempts = models.DeliveryDone, 1
		if err := s.FinishCRMDeliveries(ctx, second); err != nil {
			t.Fatalf("the second worker's finish: %v", err)
		}
		if d, _ := s.CRMDelivery(ctx, a.ID, first[0].ID); d.Status != models.DeliveryDone {
			t.Errorf("after the second worker: %s; want done", d.Status)
		}
	})
}

// A second dispatcher takes over a held dataset's probe whose lease ran
// out: the first probe's late hold, lift, release and claim change
// nothing.
func TestProbeLeaseTakenOver(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeLive)
		now := time.Now().UTC().Truncate(time.Microsecond)
		l := storedLead(t, s, a, now, "jane@example.com")
		enqueue(t, s, dueEvent(d, l, "e1", now.Add(-time.Hour), now))
		wait := func(int) time.Duration { return 0 }
		if _, _, err := s.HoldDataset(ctx, d.ID, now, "HTTP 503", wait, nil); err != nil {
			t.Fatal(err)
		}
		const lease = 20 * time.Second
		first, ok, err := s.TakeProbe(ctx, d.ID, now, lease)
		if err != nil || !ok {
			t.Fatalf("TakeProbe = %v, %v; want the probe", ok, err)
		}
		late := now.Add(lease + time.Second)
		second, ok, err := s.TakeProbe(ctx, d.ID, late, lease)
		if err != nil || !ok {
			t.Fatalf("TakeProbe after the lease ran out = %v, %v; want the probe", ok, err)
		}

		if c, err := s.ClaimEvents(ctx, d.ID, late, lease, 10, &first); err != nil || len(c.Events) != 0 {
			t.Errorf("the first probe's claim = %d events, %v; want none", len(c.Events), err)
		}
		if _, _, err := s.HoldDataset(ctx, d.ID, late, "HTTP 503", wait, &first); !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("the first probe's HoldDataset: %v; want ErrLeaseLost", err)
		}
		if _, err := s.LiftHold(ctx, d.ID, first); !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("the first probe's LiftHold: %v; want ErrLeaseLost", err)
		}
		if err := s.ReleaseProbe(ctx, d.ID, first, late); !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("the first probe's ReleaseProbe: %v; want ErrLeaseLost", err)
		}
		got, _ := s.DatasetByID(ctx, d.ID)
		if got.HeldSince == nil || got.HoldTries != 1 || got.LeaseToken == nil || *got.LeaseToken != second.Token {
			t.Fatalf("after the first probe's writes: held since %v, %d tries, lease %v; want held, 1 try, the second probe's",
				got.HeldSince, got.HoldTries, got.LeaseToken)
		}

		c, err := s.ClaimEvents(ctx, d.ID, late, lease, 10, &second)
		if err != nil || len(c.Events) != 1 {
			t.Fatalf("the second probe's claim = %d events, %v; want e1", len(c.Events), err)
		}
		if since, err := s.LiftHold(ctx, d.ID, second); err != nil || since == nil {
			t.Fatalf("the second probe's LiftHold = %v, %v; want the hold's start", since, err)
		}
		if got, _ := s.DatasetByID(ctx, d.ID); got.HeldSince != nil || got.LeaseToken != nil {
			t.Errorf("after the second probe: held since %v, lease %v; want neither", got.HeldSince, got.LeaseToken)
		}
	})
}
