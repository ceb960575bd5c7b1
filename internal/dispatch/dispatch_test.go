package dispatch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/leadsignal/leadsignal/internal/decide/decidetest"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/capi/capitest"
	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// clock is a settable time shared by the dispatcher and the fake Meta.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// bench is one account with a dataset, a fake Meta and a dispatcher.
type bench struct {
	t       *testing.T
	store   *store.Store
	meta    *capitest.Server
	box     *seal.Box
	clock   *clock
	account models.Account
	dataset models.Dataset
	leads   int
	// unprepared queues events without the payload capture prepares, so
	// the dispatcher builds each from its lead.
	unprepared bool
	// editEvent, when set, changes each event before it is queued.
	editEvent func(*models.Event)
}

func newBench(t *testing.T, s *store.Store, mode models.Mode) *bench {
	t.Helper()
	b := &bench{t: t, store: s, meta: capitest.New(t), clock: &clock{t: time.Now().UTC()}}
	b.meta.Now = b.clock.now
	box, err := seal.New(bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	b.box = box
	ctx := t.Context()
	b.account, err = s.CreateAccount(ctx, models.Account{Slug: "acme", Name: "Acme", Timezone: "UTC", Currency: "USD", DefaultCountry: "US", CRMName: "HubSpot"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	b.dataset = models.Dataset{AccountID: b.account.ID, Name: "Main", PixelID: "123456789012345", Mode: mode, LDU: models.LDUOff, TestEventCode: "TEST123", APIVersion: capitest.Version}
	if err := s.CreateDataset(ctx, &b.dataset); err != nil {
		t.Fatal(err)
	}
	b.setToken(capitest.Token)
	return b
}

func (b *bench) setToken(tok string) {
	b.t.Helper()
	b.dataset.TokenSealed = b.box.Seal(tok, dispatch.TokenLabel(b.dataset.ID))
	b.dataset.TokenLast4 = tok[len(tok)-4:]
	if err := b.store.SaveDataset(b.t.Context(), &b.dataset); err != nil {
		b.t.Fatal(err)
	}
}

func (b *bench) dispatcher() *dispatch.Dispatcher {
	return dispatch.New(dispatch.Options{
		Store: b.store, Sender: &capi.Client{}, Box: b.box, GraphURL: b.meta.URL, DefaultVersion: capitest.Version,
		Now: b.clock.now, Lease: time.Minute, Log: quiet,
	})
}

// queue stores n website leads, each with one Lead event at eventTime.
func (b *bench) queue(n int, eventTime time.Time, edit func(*models.Lead)) []models.Event {
	b.t.Helper()
	ctx := b.t.Context()
	var evs []models.Event
	for range n {
		b.leads++
		email := fmt.Sprintf("lead%d@example.com", b.leads)
		keys := normalize.Normalize(normalize.Input{Email: email, ClientIP: "203.0.113.9", UserAgent: "Mozilla/5.0", CapturedAt: eventTime})
		kj, _ := json.Marshal(keys)
		l := models.Lead{AccountID: b.account.ID, Source: models.SourceWebsite, Email: email, EmailHash: keys.Email.Hash,
			ClientIP: "203.0.113.9", ClientUserAgent: "Mozilla/5.0", EventSourceURL: "https://example.com/form",
			CreatedAt: eventTime, ReceivedAt: eventTime, Fields: "{}", MatchKeys: string(kj), JunkReasons: "[]"}
		if edit != nil {
			edit(&l)
		}
		if err := b.store.InsertLead(ctx, &l); err != nil {
			b.t.Fatal(err)
		}
		e := models.Event{AccountID: b.account.ID, DatasetID: b.dataset.ID, LeadID: l.ID, Origin: models.OriginDefault,
			EventName: "Lead", EventID: capi.EventID(b.dataset.PixelID, "Lead", capi.RecordKey(l)), EventTime: eventTime,
			NextAttemptAt: b.clock.now()}
		if !b.unprepared {
			if _, body, err := capi.Prepare(capi.BuildInput{Account: b.account, Dataset: b.dataset, Lead: l, Keys: keys, Event: e}); err == nil {
				e.Payload, e.PayloadStamp = string(body), capi.Stamp(b.account, b.dataset)
			}
		}
		if b.editEvent != nil {
			b.editEvent(&e)
		}
		evs = append(evs, e)
	}
	stored, _, err := b.store.EnqueueEvents(ctx, evs)
	if err != nil {
		b.t.Fatal(err)
	}
	return stored
}

func (b *bench) drain(d *dispatch.Dispatcher) int {
	b.t.Helper()
	n, err := d.Drain(b.t.Context())
	if err != nil {
		b.t.Fatalf("Drain: %v", err)
	}
	return n
}

func (b *bench) counts() map[models.EventStatus]int64 {
	b.t.Helper()
	c, err := b.store.EventCounts(b.t.Context(), b.account.ID, store.EventFilter{}, 1_000_000)
	if err != nil {
		b.t.Fatal(err)
	}
	return c
}

func (b *bench) event(id int64) models.Event {
	b.t.Helper()
	e, err := b.store.Event(b.t.Context(), b.account.ID, id)
	if err != nil {
		b.t.Fatal(err)
	}
	return e
}

func TestBatchesOfAtMost1000(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		b.queue(2500, b.clock.now().Add(-time.Hour), nil)
		b.drain(b.dispatcher())
		reqs := b.meta.Requests()
		var sizes []int
		for _, r := range reqs {
			sizes = append(sizes, len(r.Events))
		}
		// Batches in flight together may reach Meta in either order.
		slices.Sort(sizes)
		if fmt.Sprint(sizes) != "[500 1000 1000]" {
			t.Errorf("batch sizes %v; want [500 1000 1000]", sizes)
		}
		if c := b.counts(); c[models.EventSent] != 2500 || b.meta.EventsReceived() != 2500 {
			t.Errorf("sent %d, Meta received %d; want 2500", c[models.EventSent], b.meta.EventsReceived())
		}
		// Sending again sends nothing: every event is settled.
		if n := b.drain(b.dispatcher()); n != 0 || len(b.meta.Requests()) != 3 {
			t.Errorf("second drain claimed %d events", n)
		}
	})
}

func TestSplitOn400IsolatesBadEvents(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		evs := b.queue(10, b.clock.now().Add(-time.Hour), nil)
		b.meta.RejectEventIDs(evs[3].EventID, evs[7].EventID)
		b.drain(b.dispatcher())
		c := b.counts()
		if c[models.EventSent] != 8 || c[models.EventFailed] != 2 {
			t.Fatalf("counts %v; want 8 sent, 2 failed", c)
		}
		for _, i := range []int{3, 7} {
			e := b.event(evs[i].ID)
			if e.Status != models.EventFailed || e.LastError == "" || e.Payload == "" {
				t.Errorf("bad event %d = %s %q; want failed with Meta's message and the payload", i, e.Status, e.LastError)
			}
		}
		if b.meta.EventsReceived() != 8 {
			t.Errorf("Meta received %d; want the 8 good events", b.meta.EventsReceived())
		}
	})
}

func TestExpiredEventsAreNeverSent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		old := b.queue(1, b.clock.now().Add(-8*24*time.Hour), nil)
		b.queue(2, b.clock.now().Add(-time.Hour), nil)
		b.drain(b.dispatcher())
		if e := b.event(old[0].ID); e.Status != models.EventExpired || e.LastError == "" {
			t.Errorf("8-day-old event = %s %q; want expired with the reason", e.Status, e.LastError)
		}
		if b.meta.EventsReceived() != 2 {
			t.Errorf("Meta received %d; want 2", b.meta.EventsReceived())
		}
	})
}

func TestInvalidEventHeldBack(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		bad := b.queue(1, b.clock.now().Add(-time.Hour), func(l *models.Lead) { l.EventSourceURL = "" })
		b.queue(3, b.clock.now().Add(-time.Hour), nil)
		b.drain(b.dispatcher())
		e := b.event(bad[0].ID)
		if e.Status != models.EventFailed || e.Payload == "" || e.Attempts != 1 {
			t.Errorf("website event without URL = %s (%q); want failed before sending", e.Status, e.LastError)
		}
		if len(b.meta.Requests()) != 1 || b.meta.EventsReceived() != 3 {
			t.Errorf("requests %d, received %d; want the 3 good events in one request", len(b.meta.Requests()), b.meta.EventsReceived())
		}
	})
}

// held reads the dataset's hold.
func (b *bench) held() models.Dataset {
	b.t.Helper()
	ds, err := b.store.DatasetByID(b.t.Context(), b.dataset.ID)
	if err != nil {
		b.t.Fatal(err)
	}
	return ds
}

// TestOutageHoldsTheDataset: a failure of Meta or the network, whatever
// its kind, holds the dataset; its events wait in order and spend no
// attempt, the next try waits 1 s doubling, and a try that goes through
// lifts the hold and sends everything.
func TestOutageHoldsTheDataset(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		evs := b.queue(5, b.clock.now().Add(-time.Hour), nil)
		d := b.dispatcher()
		failures := []capitest.Failure{capitest.ServerError, capitest.Transient, capitest.Reset, capitest.Throttle, capitest.ThrottleAdAccount}
		for i, f := range failures {
			b.meta.FailNext(1, f)
			b.drain(d)
			ds := b.held()
			if ds.HeldSince == nil || ds.HoldUntil == nil || ds.HoldTries != i+1 || ds.HoldError == "" {
				t.Fatalf("after failure %d: hold since %v until %v tries %d error %q; want held, %d tries", i, ds.HeldSince, ds.HoldUntil, ds.HoldTries, ds.HoldError, i+1)
			}
			wait := ds.HoldUntil.Sub(b.clock.now())
			if base := time.Second << i; wait < base*8/10 || wait > base*12/10 {
				t.Errorf("try %d waits %s; want %s ±20%%", i+1, wait, base)
			}
			e := b.event(evs[0].ID)
			if e.Status != models.EventQueued || e.Attempts != 0 || !strings.Contains(e.LastError, "Meta unreachable") {
				t.Fatalf("event during the outage: %s, %d attempts, %q; want queued, no attempt spent", e.Status, e.Attempts, e.LastError)
			}
			// Before the next try is due, nothing goes to Meta.
			sent := len(b.meta.Requests())
			if n := b.drain(d); n != 0 || len(b.meta.Requests()) != sent {
				t.Errorf("a held dataset sent %d requests before its next try", len(b.meta.Requests())-sent)
			}
			b.clock.advance(wait)
		}
		b.drain(d)
		if c := b.counts(); c[models.EventSent] != 5 {
			t.Errorf("counts %v; want all 5 sent once Meta answers", c)
		}
		for _, e := range evs {
			if got := b.event(e.ID); got.Attempts != 1 {
				t.Errorf("event %d: %d attempts; want 1, the send that went through", e.ID, got.Attempts)
			}
		}
		if ds := b.held(); ds.HeldSince != nil || ds.HoldTries != 0 || ds.HoldError != "" {
			t.Errorf("hold after Meta came back = %v, %d tries, %q; want lifted", ds.HeldSince, ds.HoldTries, ds.HoldError)
		}
		// Every try was one request of the whole waiting batch.
		if got, want := len(b.meta.Requests()), len(failures)+1; got != want {
			t.Errorf("%d requests to Meta; want %d, one per try", got, want)
		}
	})
}

// TestLongOutage: Meta refuses connections for two days. The held dataset
// tries at most every 5 minutes, one request a try; no event spends an
// attempt or fails; once Meta is back everything goes, in lead order.
func TestLongOutage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		start := b.clock.now()
		evs := b.queue(30, start.Add(-time.Hour), nil)
		down := dispatch.New(dispatch.Options{
			Store: s, Sender: &capi.Client{}, Box: b.box, GraphURL: capitest.Unreachable(t), DefaultVersion: capitest.Version,
			Now: b.clock.now, Lease: time.Minute, Log: quiet,
		})
		tries := 0
		for b.clock.now().Sub(start) < 48*time.Hour {
			ds := b.held()
			if ds.HeldSince == nil || !ds.HoldUntil.After(b.clock.now()) {
				tries++
			}
			b.drain(down)
			if ds := b.held(); ds.HoldUntil != nil && ds.HoldUntil.Sub(b.clock.now()) > 5*time.Minute {
				t.Fatalf("next try in %s; want at most 5 minutes", ds.HoldUntil.Sub(b.clock.now()))
			}
			b.clock.advance(time.Minute)
		}
		ds := b.held()
		if ds.HeldSince == nil || !ds.HeldSince.Equal(start.Truncate(time.Microsecond)) && ds.HeldSince.Sub(start) > time.Second {
			t.Errorf("held since %v; want since the outage began, %v", ds.HeldSince, start)
		}
		// 48 hours at one try per 5 minutes at most, after the first steps.
		if ds.HoldTries > 48*12+10 || ds.HoldTries < 48*12/2 {
			t.Errorf("%d tries in 48 hours; want about one per 5 minutes", ds.HoldTries)
		}
		for _, e := range evs {
			if got := b.event(e.ID); got.Status != models.EventQueued || got.Attempts != 0 {
				t.Fatalf("event %d after 48 hours of outage: %s, %d attempts; want queued, none spent", e.ID, got.Status, got.Attempts)
			}
		}
		b.clock.advance(5 * time.Minute)
		b.drain(b.dispatcher())
		if c := b.counts(); c[models.EventSent] != 30 {
			t.Errorf("counts %v after Meta came back; want all 30 sent", c)
		}
		if got := b.meta.EventsReceived(); got != 30 {
			t.Errorf("Meta received %d events; want 30, none twice", got)
		}
		if ds := b.held(); ds.HeldSince != nil {
			t.Error("the hold outlived the outage")
		}
	})
}

// TestOutageExpiresAtSevenDays: nothing fails for an outage before Meta's
// 7-day window closes; then events expire, saying since when Meta was
// unreachable.
func TestOutageExpiresAtSevenDays(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		evs := b.queue(3, b.clock.now().Add(-time.Hour), nil)
		down := dispatch.New(dispatch.Options{
			Store: s, Sender: &capi.Client{}, Box: b.box, GraphURL: capitest.Unreachable(t), DefaultVersion: capitest.Version,
			Now: b.clock.now, Lease: time.Minute, Log: quiet,
		})
		b.drain(down)
		b.clock.advance(6*24*time.Hour + 20*time.Hour)
		b.drain(down)
		if c := b.counts(); c[models.EventQueued] != 3 {
			t.Fatalf("counts %v 6 days 21 hours into the outage; want all queued", c)
		}
		b.clock.advance(4 * time.Hour)
		b.drain(down)
		e := b.event(evs[0].ID)
		if e.Status != models.EventExpired || !strings.Contains(e.LastError, "Meta unreachable since") {
			t.Errorf("event past 7 days = %s %q; want expired, saying since when Meta was unreachable", e.Status, e.LastError)
		}
	})
}

// TestHoldIsSharedByDispatchers: two dispatchers (replicas) on one
// database send one probe between them, not one each.
func TestHoldIsSharedByDispatchers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		b.queue(20, b.clock.now().Add(-time.Hour), nil)
		b.meta.FailNext(1000, capitest.ServerError)
		one, two := b.dispatcher(), b.dispatcher()
		b.drain(one)
		for step := range 6 {
			before := len(b.meta.Requests())
			b.clock.advance(b.held().HoldUntil.Sub(b.clock.now()))
			var wg sync.WaitGroup
			for _, d := range []*dispatch.Dispatcher{one, two, one, two} {
				wg.Go(func() { b.drain(d) })
			}
			wg.Wait()
			if got := len(b.meta.Requests()) - before; got != 1 {
				t.Errorf("step %d: %d requests from two dispatchers; want one probe", step, got)
			}
		}
	})
}

// TestRefusedEventAmidOutage: an event-level refusal still splits the
// batch and fails only the bad event, and a held dataset whose probe is
// refused that way is reachable again.
func TestRefusedEventAmidOutage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		evs := b.queue(8, b.clock.now().Add(-time.Hour), nil)
		b.meta.RejectEventIDs(evs[5].EventID)
		b.meta.FailNext(1, capitest.Reset)
		d := b.dispatcher()
		b.drain(d)
		b.clock.advance(2 * time.Second)
		b.drain(d)
		c := b.counts()
		if c[models.EventSent] != 7 || c[models.EventFailed] != 1 {
			t.Errorf("counts %v; want 7 sent and the refused one failed", c)
		}
		if e := b.event(evs[5].ID); e.Status != models.EventFailed || e.Attempts != 1 {
			t.Errorf("refused event = %s with %d attempts; want failed, its one attempt spent", e.Status, e.Attempts)
		}
		if ds := b.held(); ds.HeldSince != nil {
			t.Error("dataset still held after Meta answered")
		}
	})
}

func TestInvalidTokenPausesDataset(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		b.setToken("expired-token-1234")
		b.queue(4, b.clock.now().Add(-time.Hour), nil)
		d := b.dispatcher()
		b.drain(d)
		ds, _ := s.DatasetByID(t.Context(), b.dataset.ID)
		if ds.PausedAt == nil || ds.PausedReason == "" {
			t.Fatalf("dataset not paused after 190: %+v", ds)
		}
		if c := b.counts(); c[models.EventQueued] != 4 {
			t.Errorf("counts %v; want the 4 events waiting", c)
		}
		// Never retried blindly: later drains send nothing.
		b.clock.advance(time.Hour)
		b.drain(d)
		if n := len(b.meta.Requests()); n != 1 {
			t.Errorf("%d requests; want only the one refused", n)
		}
		paused, _ := s.StalledDatasets(t.Context(), b.account.ID)
		if len(paused) != 1 || paused[0].Waiting != 4 || paused[0].Oldest == nil {
			t.Errorf("StalledDatasets = %+v", paused)
		}
		// A new token resumes.
		b.dataset = ds
		b.setToken(capitest.Token)
		if err := s.ResumeDataset(t.Context(), b.account.ID, b.dataset.ID, b.clock.now()); err != nil {
			t.Fatal(err)
		}
		b.drain(d)
		if c := b.counts(); c[models.EventSent] != 4 {
			t.Errorf("counts %v; want 4 sent after the new token", c)
		}
	})
}

func TestLeaseRecoveryAfterKilledDispatcher(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		evs := b.queue(5, b.clock.now().Add(-time.Hour), nil)
		// A dispatcher claims the batch and dies before sending it.
		claimed, err := s.ClaimEvents(t.Context(), b.dataset.ID, b.clock.now(), time.Minute, 1000, nil)
		if err != nil || len(claimed.Events) != 5 {
			t.Fatalf("claim = %d, %v", len(claimed.Events), err)
		}
		d := b.dispatcher()
		if n := b.drain(d); n != 0 {
			t.Errorf("claimed %d leased events before the lease ran out", n)
		}
		b.clock.advance(2 * time.Minute)
		b.drain(d)
		reqs := b.meta.Requests()
		if len(reqs) != 1 || len(reqs[0].Events) != 5 {
			t.Fatalf("requests %d; want one with the 5 events", len(reqs))
		}
		for i, id := range reqs[0].EventIDs() {
			if id != evs[i].EventID {
				t.Errorf("event %d sent with id %s; want the queued id %s", i, id, evs[i].EventID)
			}
		}
	})
}

func TestTwoDispatchersNeverSendOneEventTwice(t *testing.T) {
	t.Parallel()
	s := storetest.NewPostgres(t)
	b := newBench(t, s, models.ModeLive)
	b.queue(3000, b.clock.now().Add(-time.Hour), nil)
	var wg sync.WaitGroup
	for range 2 {
		d := b.dispatcher()
		wg.Go(func() {
			if _, err := d.Drain(t.Context()); err != nil {
				t.Errorf("Drain: %v", err)
			}
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for _, r := range b.meta.Requests() {
		for _, id := range r.EventIDs() {
			seen[id]++
		}
	}
	if len(seen) != 3000 {
		t.Errorf("%d distinct events sent; want 3000", len(seen))
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("event %s sent %d times", id, n)
		}
	}
}

func TestDryRunSendsNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeDryRun)
		evs := b.queue(3, b.clock.now().Add(-time.Hour), nil)
		b.drain(b.dispatcher())
		if len(b.meta.Requests()) != 0 {
			t.Errorf("dry run sent %d requests", len(b.meta.Requests()))
		}
		e := b.event(evs[0].ID)
		var payload map[string]any
		if e.Status != models.EventDryRun || json.Unmarshal([]byte(e.Payload), &payload) != nil || payload["event_id"] != evs[0].EventID {
			t.Errorf("dry-run event = %s payload %s", e.Status, e.Payload)
		}
	})
}

func TestTestModeAndLDU(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeTest)
		b.dataset.LDU = models.LDUCalifornia
		if err := s.SaveDataset(t.Context(), &b.dataset); err != nil {
			t.Fatal(err)
		}
		b.queue(1, b.clock.now().Add(-time.Hour), func(l *models.Lead) { l.Country, l.State = "US", "CA" })
		b.queue(1, b.clock.now().Add(-time.Hour), func(l *models.Lead) { l.Country, l.State = "US", "TX" })
		b.drain(b.dispatcher())
		reqs := b.meta.Requests()
		if len(reqs) != 1 || reqs[0].TestEventCode != "TEST123" {
			t.Fatalf("requests %+v; want one with the test event code", reqs)
		}
		ca, tx := reqs[0].Events[0], reqs[0].Events[1]
		if fmt.Sprint(ca["data_processing_options"]) != "[LDU]" || fmt.Sprint(ca["data_processing_options_state"]) != "1000" {
			t.Errorf("California lead: %v / %v", ca["data_processing_options"], ca["data_processing_options_state"])
		}
		if dpo, ok := tx["data_processing_options"]; ok && fmt.Sprint(dpo) == "[LDU]" {
			t.Errorf("Texas lead got LDU: %v", dpo)
		}
	})
}

// An event queued with a prepared payload is sent exactly as prepared,
// without its lead being read; once the dataset's settings change, a
// payload prepared before is built again from the lead.
func TestPreparedPayloadsAndSettingsChanges(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		b := newBench(t, s, models.ModeLive)
		// A prepared payload that differs from what the lead would give:
		// only sending it as it is puts this URL in the request.
		b.editEvent = func(e *models.Event) {
			e.Payload = strings.Replace(e.Payload, "https://example.com/form", "https://example.com/prepared", 1)
		}
		b.queue(1, b.clock.now().Add(-time.Hour), nil)
		b.editEvent = nil
		b.drain(b.dispatcher())
		reqs := b.meta.Requests()
		if len(reqs) != 1 || reqs[0].Events[0]["event_source_url"] != "https://example.com/prepared" {
			t.Fatalf("requests = %+v; want the prepared payload sent as it is", reqs)
		}

		// Prepared under LDU off, sent after LDU was turned on: built again.
		ev := b.queue(1, b.clock.now().Add(-time.Hour), nil)[0]
		if p := b.event(ev.ID).Payload; !strings.Contains(p, `"data_processing_options":[]`) {
			t.Fatalf("prepared payload = %s; want no LDU", p)
		}
		b.dataset.LDU = models.LDUAlways
		if err := s.SaveDataset(ctx, &b.dataset); err != nil {
			t.Fatal(err)
		}
		b.drain(b.dispatcher())
		reqs = b.meta.Requests()
		if len(reqs) != 2 || fmt.Sprint(reqs[1].Events[0]["data_processing_options"]) != "[LDU]" {
			t.Fatalf("requests = %+v; want the event built again with LDU", reqs)
		}
		if e := b.event(ev.ID); e.Status != models.EventSent {
			t.Errorf("event = %s; want sent", e.Status)
		}
	})
}

// Events queued without a prepared payload (before migration 0008, or
// after a retry) are built from their leads.
func TestUnpreparedEventsAreBuilt(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		b.unprepared = true
		evs := b.queue(3, b.clock.now().Add(-time.Hour), nil)
		if e := b.event(evs[0].ID); e.Payload != "" || e.PayloadStamp != 0 {
			t.Fatalf("queued event = %q, stamp %d; want no prepared payload", e.Payload, e.PayloadStamp)
		}
		b.drain(b.dispatcher())
		reqs := b.meta.Requests()
		if len(reqs) != 1 || len(reqs[0].Events) != 3 || reqs[0].Events[0]["event_source_url"] != "https://example.com/form" {
			t.Fatalf("requests = %+v; want the 3 events built from their leads", reqs)
		}
	})
}

func TestLeadEventsStayInOrder(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		first := b.queue(1, b.clock.now().Add(-2*time.Hour), nil)[0]
		// A later event of the same lead (a stage change).
		later, _, err := s.EnqueueEvents(t.Context(), []models.Event{{AccountID: b.account.ID, DatasetID: b.dataset.ID, LeadID: first.LeadID,
			Origin: models.OriginStage, EventName: "Schedule", EventID: "later-1", EventTime: b.clock.now().Add(-time.Hour), NextAttemptAt: b.clock.now()}})
		if err != nil {
			t.Fatal(err)
		}
		b.meta.FailNext(1, capitest.ServerError)
		d := b.dispatcher()
		b.drain(d)
		// The outage holds both, in order, spending no attempt.
		if e := b.event(later[0].ID); e.Status != models.EventQueued || e.Attempts != 0 {
			t.Errorf("later event = %s after %d attempts; want queued, none spent", e.Status, e.Attempts)
		}
		b.clock.advance(time.Hour)
		b.drain(d)
		reqs := b.meta.Requests()
		last := reqs[len(reqs)-1]
		if ids := last.EventIDs(); len(ids) != 2 || ids[0] != first.EventID || ids[1] != "later-1" {
			t.Errorf("retry sent %v; want the lead's events in event_time order", ids)
		}
	})
}

// blockingSender holds the first send until the test lets it go.
type blockingSender struct {
	inner   dispatch.Sender
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *blockingSender) Send(ctx context.Context, t capi.Target, evs []json.RawMessage) (capi.Response, error) {
	s.once.Do(func() {
		close(s.entered)
		<-s.release
	})
	return s.inner.Send(ctx, t, evs)
}

func TestShutdownFinishesTheBatchInFlight(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		b.queue(20, b.clock.now().Add(-time.Hour), nil)
		snd := &blockingSender{inner: &capi.Client{}, entered: make(chan struct{}), release: make(chan struct{})}
		d := dispatch.New(dispatch.Options{Store: s, Sender: snd, Box: b.box, GraphURL: b.meta.URL, Now: b.clock.now, Lease: time.Minute, Idle: 10 * time.Millisecond, Log: quiet})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx) }()
		<-snd.entered
		cancel() // SIGTERM while a batch is on its way
		close(snd.release)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run = %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after cancel")
		}
		if c := b.counts(); c[models.EventSent] != 20 || c[models.EventSending] != 0 {
			t.Errorf("counts %v; want the batch in flight finished: 20 sent, none left sending", c)
		}
	})
}

func TestFutureEventWaits(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		evs := b.queue(1, b.clock.now().Add(10*time.Minute), nil)
		b.drain(b.dispatcher())
		if e := b.event(evs[0].ID); e.Status != models.EventQueued || !e.NextAttemptAt.After(b.clock.now()) {
			t.Fatalf("future event = %s next %v; want queued until its time", e.Status, e.NextAttemptAt)
		}
		b.clock.advance(11 * time.Minute)
		b.drain(b.dispatcher())
		if e := b.event(evs[0].ID); e.Status != models.EventSent {
			t.Errorf("after its time the event is %s; want sent", e.Status)
		}
	})
}

func TestNotifyWakesAnIdleDispatcher(t *testing.T) {
	t.Parallel()
	b := newBench(t, storetest.New(t), models.ModeLive)
	d := dispatch.New(dispatch.Options{Store: b.store, Sender: &capi.Client{}, Box: b.box, GraphURL: b.meta.URL,
		Now: b.clock.now, Idle: time.Hour, Log: quiet})
	// The first event is sent by Run's first pass; after it the
	// dispatcher idles for an hour unless notified: without Notify the
	// second wait would fail after its 10 s.
	b.queue(1, b.clock.now().Add(-time.Minute), nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go d.Run(ctx) //nolint:errcheck // ends with the test
	b.meta.WaitEvents(t, 1)
	b.queue(1, b.clock.now().Add(-time.Minute), nil)
	d.Notify()
	b.meta.WaitEvents(t, 2)
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	b := newBench(t, s, models.ModeLive)
	reg := prometheus.NewRegistry()
	m := dispatch.NewMetrics(reg, s)
	d := dispatch.New(dispatch.Options{Store: s, Sender: &capi.Client{}, Box: b.box, GraphURL: b.meta.URL, Now: b.clock.now, Log: quiet, Metrics: m})
	b.queue(3, b.clock.now().Add(-time.Hour), nil)
	b.queue(1, b.clock.now().Add(-8*24*time.Hour), nil)
	b.queue(2, b.clock.now().Add(time.Hour), nil) // in the future: they wait
	if _, err := d.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			key := f.GetName()
			for _, l := range mt.GetLabel() {
				key += "{" + l.GetValue() + "}"
			}
			switch {
			case mt.GetCounter() != nil:
				got[key] = mt.GetCounter().GetValue()
			case mt.GetGauge() != nil:
				got[key] = mt.GetGauge().GetValue()
			case mt.GetHistogram() != nil:
				got[key] = float64(mt.GetHistogram().GetSampleCount())
			}
		}
	}
	want := map[string]float64{
		"leadsignal_events_settled_total{meta}{sent}":    3,
		"leadsignal_events_settled_total{meta}{expired}": 1,
		"leadsignal_events_queue{queued}":                2,
		"leadsignal_events_queue{sending}":               0,
		"leadsignal_capi_request_seconds{meta}":          1,
		"leadsignal_capi_batch_events{meta}":             1,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v; want %v", k, got[k], v)
		}
	}
	if _, ok := got["leadsignal_events_queue{sent}"]; ok {
		t.Error("sent events are not in the queue; the settled counters count them")
	}
	if got["leadsignal_datasets_held"] != 0 || got["leadsignal_oldest_waiting_event_seconds"] != 0 {
		t.Errorf("held %v, oldest waiting %v s; want 0 and 0 (only future events wait)", got["leadsignal_datasets_held"], got["leadsignal_oldest_waiting_event_seconds"])
	}

	// An outage: the dataset is held, and its events age.
	b.queue(2, time.Now().Add(-time.Hour), nil)
	b.meta.FailNext(1, capitest.Reset)
	if _, err := d.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	got = gauges(t, reg)
	if got["leadsignal_datasets_held"] != 1 {
		t.Errorf("leadsignal_datasets_held = %v during the outage; want 1", got["leadsignal_datasets_held"])
	}
	if age := got["leadsignal_oldest_waiting_event_seconds"]; age < 3590 || age > 3700 {
		t.Errorf("leadsignal_oldest_waiting_event_seconds = %v; want about an hour", age)
	}
}

// gauges gathers the gauges of reg by name.
func gauges(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			if mt.GetGauge() != nil && len(mt.GetLabel()) == 0 {
				got[f.GetName()] = mt.GetGauge().GetValue()
			}
		}
	}
	return got
}

func TestBatchLevelRefusalPausesWithoutSplitting(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		b.queue(8, b.clock.now().Add(-time.Hour), nil)
		b.meta.Pixels = map[string]bool{"999": true} // our dataset id is unknown to Meta: 100/33
		b.drain(b.dispatcher())
		if n := len(b.meta.Requests()); n != 1 {
			t.Errorf("%d requests; want 1, no split for a refusal that is not about an event", n)
		}
		ds, _ := s.DatasetByID(t.Context(), b.dataset.ID)
		if ds.PausedAt == nil || ds.PausedReason == "" {
			t.Errorf("dataset not paused: %+v", ds)
		}
		if c := b.counts(); c[models.EventQueued] != 8 {
			t.Errorf("counts %v; want all 8 waiting for a fix", c)
		}
	})
}

func TestJunkLeadIsNeverSent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		evs := b.queue(2, b.clock.now().Add(-time.Hour), nil)
		// A person marks the first lead junk after its event was queued.
		if _, err := decidetest.Mark(t.Context(), s, models.StageChange{AccountID: b.account.ID, LeadID: evs[0].LeadID,
			Stage: models.StageJunk, OccurredAt: b.clock.now()}); err != nil {
			t.Fatal(err)
		}
		b.drain(b.dispatcher())
		if e := b.event(evs[0].ID); e.Status != models.EventFailed || e.LastError != dispatch.JunkLead {
			t.Errorf("junk lead's event = %s %q", e.Status, e.LastError)
		}
		// "Retry all failed" tries it again, and the dispatcher holds it
		// back again: its rule does not require junk.
		if n, err := s.RetryEvents(t.Context(), b.account.ID, nil, b.clock.now()); err != nil || n != 1 {
			t.Errorf("RetryEvents = %d, %v; want the junk lead's event retried", n, err)
		}
		b.drain(b.dispatcher())
		if e := b.event(evs[0].ID); e.Status != models.EventFailed || e.LastError != dispatch.JunkLead {
			t.Errorf("junk lead's event after a retry = %s %q; want held back again", e.Status, e.LastError)
		}
		if b.meta.EventsReceived() != 1 {
			t.Errorf("Meta received %d; want only the other lead", b.meta.EventsReceived())
		}
	})
}

// countingSender counts the sends in flight at once. Each send but the
// first (the probe of a held dataset, which goes alone) waits, as one to a
// slow Meta would, until another send is in flight too: batches claimed
// and built side by side then overlap here however loaded the machine is.
// A dispatcher that sends one batch at a time is caught by the 10 s the
// wait lasts at most, and then sends on without waiting.
type countingSender struct {
	inner          dispatch.Sender
	mu             sync.Mutex
	sends          int
	now, maxAtOnce int
	overlap        chan struct{} // closed once two sends are in flight, or the wait was in vain
	closeOverlap   sync.Once
}

func newCountingSender(inner dispatch.Sender) *countingSender {
	return &countingSender{inner: inner, overlap: make(chan struct{})}
}

func (s *countingSender) Send(ctx context.Context, t capi.Target, evs []json.RawMessage) (capi.Response, error) {
	s.mu.Lock()
	s.sends++
	first := s.sends == 1
	s.now++
	s.maxAtOnce = max(s.maxAtOnce, s.now)
	if s.now >= 2 {
		s.closeOverlap.Do(func() { close(s.overlap) })
	}
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.now--; s.mu.Unlock() }()
	if !first {
		select {
		case <-s.overlap:
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			s.closeOverlap.Do(func() { close(s.overlap) })
		}
	}
	return s.inner.Send(ctx, t, evs)
}

// TestBacklogDrainsInParallelAfterAnOutage: once the probe lifts a hold,
// the backlog goes InFlight batches at a time, not one by one.
func TestBacklogDrainsInParallelAfterAnOutage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		b.queue(4*dispatch.MaxBatch, b.clock.now().Add(-time.Hour), nil)
		// The dataset held by an outage, its next try due in a second.
		if _, _, err := s.HoldDataset(t.Context(), b.dataset.ID, b.clock.now(), "network: connection refused",
			func(int) time.Duration { return time.Second }, nil); err != nil {
			t.Fatal(err)
		}
		cs := newCountingSender(&capi.Client{})
		d := dispatch.New(dispatch.Options{
			Store: s, Sender: cs, Box: b.box, GraphURL: b.meta.URL, DefaultVersion: capitest.Version,
			Now: b.clock.now, Lease: time.Minute, Log: quiet,
		})
		if n := b.drain(d); n != 0 {
			t.Fatalf("a held dataset sent %d events before its next try", n)
		}
		b.clock.advance(time.Second)
		b.drain(d)
		if c := b.counts(); c[models.EventSent] != 4*dispatch.MaxBatch {
			t.Fatalf("counts %v; want the whole backlog sent", c)
		}
		if cs.maxAtOnce < 2 {
			t.Errorf("at most %d batch in flight after the hold lifted; want up to %d", cs.maxAtOnce, dispatch.InFlight)
		}
	})
}

// A send rule's test code goes with its events only: a live dataset sends
// them in a request of their own, with the code, and the others without;
// the rule's action_source replaces the lead's.
func TestRuleTestCodeAndActionSource(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		b.unprepared = true
		b.queue(2, b.clock.now().Add(-time.Hour), nil)
		b.editEvent = func(e *models.Event) {
			e.EventName, e.TestEventCode, e.ActionSource = "QualifiedLead", "RULE9", capi.ActionSystemGenerated
			e.EventID = capi.EventID(b.dataset.PixelID, e.EventName, fmt.Sprint(e.LeadID))
		}
		b.queue(1, b.clock.now().Add(-time.Hour), nil)
		if n := b.drain(b.dispatcher()); n != 3 {
			t.Fatalf("drained %d; want 3", n)
		}
		reqs := b.meta.Requests()
		if len(reqs) != 2 {
			t.Fatalf("requests %+v; want two", reqs)
		}
		for _, r := range reqs {
			switch r.TestEventCode {
			case "":
				if len(r.Events) != 2 || r.Events[0]["action_source"] != "website" {
					t.Errorf("request without a code = %+v; want the 2 Lead events, from the website", r.Events)
				}
			case "RULE9":
				if len(r.Events) != 1 || r.Events[0]["event_name"] != "QualifiedLead" || r.Events[0]["action_source"] != "system_generated" {
					t.Errorf("request with the rule's code = %+v; want its event, system_generated", r.Events)
				}
			default:
				t.Errorf("request with test code %q", r.TestEventCode)
			}
		}
	})
}

// An event built at send time for a junk lead is held back, unless a send
// rule that requires junk made it.
func TestJunkLeadEventsOfJunkRulesGo(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBench(t, s, models.ModeLive)
		b.unprepared = true
		junkRule := models.SendRule{AccountID: b.account.ID, DatasetID: b.dataset.ID, Name: "Junk audience", Mode: "automatic_match",
			EventName: "JunkLead", Combinator: "and", Conditions: `[{"field":"junk","match_type":"equals","pattern":"true"}]`, Enabled: true}
		if err := s.CreateSendRule(t.Context(), &junkRule, nil); err != nil {
			t.Fatal(err)
		}
		junk := func(l *models.Lead) { l.Junk = true }
		held := b.queue(1, b.clock.now().Add(-time.Hour), junk)
		b.editEvent = func(e *models.Event) {
			e.EventName, e.Origin, e.OriginID = "JunkLead", models.OriginRule, &junkRule.ID
			e.EventID = capi.EventID(b.dataset.PixelID, e.EventName, fmt.Sprint(e.LeadID))
		}
		sent := b.queue(1, b.clock.now().Add(-time.Hour), junk)
		b.drain(b.dispatcher())
		if e, err := s.Event(t.Context(), b.account.ID, held[0].ID); err != nil || e.Status != models.EventFailed || e.LastError != dispatch.JunkLead {
			t.Errorf("the default rule's event of a junk lead = %s %q, %v; want held back", e.Status, e.LastError, err)
		}
		if e, err := s.Event(t.Context(), b.account.ID, sent[0].ID); err != nil || e.Status != models.EventSent {
			t.Errorf("the junk rule's event = %s %q, %v; want sent", e.Status, e.LastError, err)
		}
		// A failed event of the junk rule is retried and sent.
		failed := b.queue(1, b.clock.now().Add(-time.Hour), junk)
		c, err := s.ClaimEvents(t.Context(), b.dataset.ID, b.clock.now(), time.Minute, 10, nil)
		if err != nil || len(c.Events) != 1 {
			t.Fatalf("claim = %+v, %v", c.Events, err)
		}
		if err := s.SettleEvents(t.Context(), c, nil, "", b.clock.now(), []store.Outcome{{ID: failed[0].ID, Status: models.EventFailed, Error: "Meta refused it"}}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.RetryEvents(t.Context(), b.account.ID, []int64{failed[0].ID}, b.clock.now()); err != nil || n != 1 {
			t.Fatalf("retry of the junk rule's failed event = %d, %v; want 1", n, err)
		}
		b.drain(b.dispatcher())
		if e, err := s.Event(t.Context(), b.account.ID, failed[0].ID); err != nil || e.Status != models.EventSent {
			t.Errorf("the junk rule's retried event = %s %q, %v; want sent", e.Status, e.LastError, err)
		}
	})
}
