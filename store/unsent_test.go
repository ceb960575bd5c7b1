package store_test

import (
	"database/sql"
	"errors"
	"fmt"
	"github.com/leadsignal/leadsignal/internal/decide/decidetest"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// One batch settles every way an event can end: the counts, the status
// filters, the paused banner's count and the metrics gauge all read the
// statuses that unsent_events keeps, and a sent event is read from events.
// A retried event goes back to the queue and is claimed again.
func TestSettledStatusesAreCountedAndFiltered(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeLive)
		now := time.Now().UTC()
		names := []string{"sent", "failed", "expired", "retried", "dry"}
		var evs []models.Event
		for i, name := range names {
			l := storedLead(t, s, a, now, name+"@example.com")
			evs = append(evs, dueEvent(d, l, name, now.Add(time.Duration(i-10)*time.Minute), now))
		}
		stored := enqueue(t, s, evs...)
		id := map[string]int64{}
		for _, e := range stored {
			id[e.EventID] = e.ID
		}
		if depth, err := s.QueueDepth(ctx); err != nil || depth[models.EventQueued] != 5 {
			t.Fatalf("queue depth before the claim = %v, %v; want 5 queued", depth, err)
		}
		c, err := s.ClaimEvents(ctx, d.ID, now, time.Minute, 10, nil)
		if err != nil || len(c.Events) != 5 {
			t.Fatalf("claim = %d events, %v; want 5", len(c.Events), err)
		}
		leadIDs := make([]int64, len(c.Events))
		for i, e := range c.Events {
			leadIDs[i] = e.LeadID
		}
		leads, err := s.PayloadLeads(ctx, a.ID, leadIDs)
		if err != nil || len(leads) != 5 || leads[leadIDs[0]].Source != models.SourceWebsite || leads[leadIDs[0]].MatchKeys == "" {
			t.Fatalf("payload leads = %+v, %v; want the 5 leads with their columns", leads, err)
		}
		if other, err := s.PayloadLeads(ctx, b.ID, leadIDs); err != nil || len(other) != 0 {
			t.Errorf("another account's payload leads = %v, %v; want none", other, err)
		}
		if depth, _ := s.QueueDepth(ctx); depth[models.EventSending] != 5 || depth[models.EventQueued] != 0 {
			t.Errorf("queue depth while sending = %v; want 5 sending", depth)
		}
		req := models.SendRequest{AccountID: a.ID, DatasetID: d.ID, Kind: "batch", StartedAt: now, Payload: `[]`}
		if err := s.InsertSendRequest(ctx, &req); err != nil {
			t.Fatal(err)
		}
		outs := []store.Outcome{
			{ID: id["sent"], Status: models.EventSent},
			{ID: id["failed"], Status: models.EventFailed, Error: "Meta refused"},
			{ID: id["expired"], Status: models.EventExpired, Error: "too old"},
			{ID: id["retried"], Status: models.EventQueued, Error: "HTTP 500", NextAttemptAt: now.Add(time.Hour)},
			{ID: id["dry"], Status: models.EventDryRun, Payload: `{"event_name":"Lead"}`},
		}
		if err := s.SettleEvents(ctx, c, &req.ID, "trace", now, outs); err != nil {
			t.Fatal(err)
		}
		want := map[models.EventStatus]int64{models.EventSent: 1, models.EventFailed: 1, models.EventExpired: 1, models.EventQueued: 1, models.EventDryRun: 1}
		// Filtered by dataset at most, counts read no event's row; with an
		// event name, they read the events: both agree.
		for _, f := range []store.EventFilter{{}, {DatasetID: d.ID}, {EventName: "Lead"}, {DatasetID: d.ID, EventName: "Lead"}} {
			got, err := s.EventCounts(ctx, a.ID, f, 100)
			if err != nil || len(got) != len(want) {
				t.Fatalf("counts(%+v) = %v, %v; want %v", f, got, err, want)
			}
			for st, n := range want {
				if got[st] != n {
					t.Errorf("counts(%+v)[%s] = %d; want %d", f, st, got[st], n)
				}
			}
		}
		for st, name := range map[models.EventStatus]string{models.EventSent: "sent", models.EventFailed: "failed",
			models.EventExpired: "expired", models.EventQueued: "retried", models.EventDryRun: "dry"} {
			got, err := s.Events(ctx, a.ID, store.EventFilter{Status: st}, nil, 10)
			if err != nil || len(got) != 1 || got[0].EventID != name || got[0].Status != st || got[0].Attempts != 1 {
				t.Errorf("events with status %s = %+v, %v; want %q after 1 attempt", st, got, err, name)
			}
		}
		retried, err := s.Event(ctx, a.ID, id["retried"])
		if err != nil || !near(retried.NextAttemptAt, now.Add(time.Hour)) || retried.LastError != "HTTP 500" {
			t.Errorf("retried event = next %v error %q, %v; want the retry's schedule", retried.NextAttemptAt, retried.LastError, err)
		}
		sent, err := s.Event(ctx, a.ID, id["sent"])
		if err != nil || sent.SentAt == nil || sent.FBTraceID != "trace" || sent.RequestID == nil || *sent.RequestID != req.ID {
			t.Errorf("sent event = %+v, %v; want its request and trace", sent, err)
		}
		// Each count stops at the limit, sent events too.
		if got, err := s.EventCounts(ctx, a.ID, store.EventFilter{}, 1); err != nil || len(got) != len(want) || got[models.EventSent] != 1 {
			t.Errorf("counts up to 1 = %v, %v; want 1 of each", got, err)
		}
		// The other account sees none of it, even naming the dataset.
		for _, f := range []store.EventFilter{{}, {DatasetID: d.ID}} {
			if got, err := s.EventCounts(ctx, b.ID, f, 100); err != nil || len(got) != 0 {
				t.Errorf("other account's counts(%+v) = %v, %v; want none", f, got, err)
			}
		}

		// Retry now queues the failed event at once; the expired one stays.
		if n, err := s.RetryEvents(ctx, a.ID, nil, now); err != nil || n != 1 {
			t.Fatalf("retry = %d, %v; want 1", n, err)
		}
		if got, _ := s.EventCounts(ctx, a.ID, store.EventFilter{}, 100); got[models.EventQueued] != 2 || got[models.EventFailed] != 0 {
			t.Errorf("counts after retry = %v; want 2 queued, none failed", got)
		}
		again, err := s.ClaimEvents(ctx, d.ID, now.Add(time.Second), time.Minute, 10, nil)
		if err != nil || len(again.Events) != 1 || again.Events[0].ID != id["failed"] || again.Events[0].Attempts != 1 {
			t.Fatalf("claim after retry = %+v, %v; want the failed event, on a fresh count of attempts", again.Events, err)
		}
		if err := s.ReleaseEvents(ctx, again); err != nil {
			t.Fatal(err)
		}
		if err := s.PauseDataset(ctx, d.ID, "token refused", now); err != nil {
			t.Fatal(err)
		}
		paused, err := s.StalledDatasets(ctx, a.ID)
		if err != nil || len(paused) != 1 || paused[0].Waiting != 2 || paused[0].Oldest == nil || !near(*paused[0].Oldest, evs[1].EventTime) {
			t.Errorf("paused = %+v, %v; want 2 waiting, the oldest being the failed one's time", paused, err)
		}
	})
}

// near says whether two times are the same to the microsecond, as
// Postgres keeps them.
func near(a, b time.Time) bool { return a.Sub(b).Abs() < time.Microsecond }

// Settling a batch must stay a HOT update on Postgres, which writes no
// index entry: no index of events may read a column that a settle writes
// (in its key, an expression or its predicate). Adding one would make every
// sent batch write an entry per event into every index of events.
func TestNoIndexOfEventsReadsSettledColumns(t *testing.T) {
	t.Parallel()
	db := migratedPostgres(t)
	rows, err := db.QueryContext(t.Context(), "SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = 'events'::regclass")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	settled := []string{"status", "attempts", "last_error", "updated_at", "payload", "sent_at", "fbtrace_id", "request_id"}
	n := 0
	for rows.Next() {
		var def string
		if err := rows.Scan(&def); err != nil {
			t.Fatal(err)
		}
		n++
		for _, word := range strings.FieldsFunc(def, func(r rune) bool { return !unicode.IsLetter(r) && r != '_' }) {
			if slices.Contains(settled, word) {
				t.Errorf("%s reads %s, which a settle writes", def, word)
			}
		}
	}
	if err := rows.Err(); err != nil || n < 4 {
		t.Fatalf("read %d indexes of events, %v", n, err)
	}
}

// Sending a batch writes nothing to the events' rows (migration 0010): no
// new row version, so the payload can stay where it is, and the request
// need not keep the batch's JSON again. Both settle paths are covered: a
// batch Meta took whole, and one with a payload built at send time.
func TestSendLeavesEventRowsAlone(t *testing.T) {
	t.Parallel()
	u := storetest.MigratedPostgresURL(t)
	s, err := store.Open(t.Context(), store.Options{PostgresURL: u})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	a, _ := twoAccounts(t, s)
	d := newDataset(t, s, a, models.ModeLive)
	now := time.Now().UTC()
	row := func(id int64) string {
		t.Helper()
		var r string
		if err := db.QueryRowContext(ctx, "SELECT ctid::text || ' ' || e::text FROM events e WHERE id = $1", id).Scan(&r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	for i, built := range []string{"", `{"built":true}`} {
		var evs []models.Event
		for j := range 3 {
			l := storedLead(t, s, a, now, fmt.Sprintf("%d-%d@example.com", i, j))
			e := dueEvent(d, l, fmt.Sprintf("e%d-%d", i, j), now.Add(-time.Hour), now)
			e.Payload, e.PayloadStamp = `{"queued":true}`, 7
			evs = append(evs, e)
		}
		enqueue(t, s, evs...)
		c, err := s.ClaimEvents(ctx, d.ID, now, time.Minute, 10, nil)
		if err != nil || len(c.Events) != 3 {
			t.Fatalf("claim = %+v, %v", c.Events, err)
		}
		before := map[int64]string{}
		outs := make([]store.Outcome, len(c.Events))
		for k, e := range c.Events {
			before[e.ID] = row(e.ID)
			outs[k] = store.Outcome{ID: e.ID, Status: models.EventSent}
		}
		// The last one's payload was built at send time: it replaces the
		// queued one, and that row alone is written.
		outs[2].Payload = built
		req := models.SendRequest{AccountID: a.ID, DatasetID: d.ID, Kind: "batch", StartedAt: now}
		if err := s.InsertSendRequest(ctx, &req); err != nil {
			t.Fatal(err)
		}
		if err := s.SettleEvents(ctx, c, &req.ID, "trace", now, outs); err != nil {
			t.Fatal(err)
		}
		for k, e := range c.Events {
			if k == 2 && built != "" {
				if got, err := s.Event(ctx, a.ID, e.ID); err != nil || got.Payload != built || got.Status != models.EventSent {
					t.Errorf("event built at send time = %+v, %v; want sent with the built payload", got, err)
				}
				continue
			}
			if after := row(e.ID); after != before[e.ID] {
				t.Errorf("sending rewrote the event's row:\n%s\n%s", before[e.ID], after)
			}
		}
	}
}

// migratedPostgres returns a plain connection pool to a fresh migrated
// Postgres database, for tests that read the catalog or plans.
func migratedPostgres(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", storetest.MigratedPostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Queueing a sent event again (a resent form, a lead marked not junk again)
// changes nothing: it is not sent twice.
func TestEnqueueSentEventAgain(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeLive)
		now := time.Now().UTC()
		l := storedLead(t, s, a, now, "jane@example.com")
		ev := dueEvent(d, l, "e1", now, now)
		enqueue(t, s, ev)
		c, err := s.ClaimEvents(ctx, d.ID, now, time.Minute, 10, nil)
		if err != nil || len(c.Events) != 1 {
			t.Fatalf("claim = %+v, %v", c.Events, err)
		}
		if err := s.SettleEvents(ctx, c, nil, "trace", now, []store.Outcome{{ID: c.Events[0].ID, Status: models.EventSent}}); err != nil {
			t.Fatal(err)
		}
		again, _, err := s.EnqueueEvents(ctx, []models.Event{ev})
		if err != nil || len(again) != 1 || again[0].Status != models.EventSent {
			t.Fatalf("enqueue again = %+v, %v; want the sent event", again, err)
		}
		if c, err := s.ClaimEvents(ctx, d.ID, now.Add(time.Hour), time.Minute, 10, nil); err != nil || len(c.Events) != 0 {
			t.Errorf("claim after enqueueing a sent event again = %+v, %v; want nothing", c.Events, err)
		}
		if n, _ := s.EventCounts(ctx, a.ID, store.EventFilter{}, 100); n[models.EventSent] != 1 || len(n) != 1 {
			t.Errorf("counts = %v; want 1 sent", n)
		}
	})
}

// A change of a lead cancels the queued events its decision says, but not
// one being sent; a later change queues them again, and they are claimed.
// A decision made from a lead that changed since writes nothing. A batch
// put back unsent (a paused dataset) counts no attempt.
func TestChangeLeadCancelsAndRequeues(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		d1 := newDataset(t, s, a, models.ModeLive)
		d2 := models.Dataset{AccountID: a.ID, Name: "Second", PixelID: "223456789012345", Mode: models.ModeLive, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &d2); err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		l := storedLead(t, s, a, now, "jane@example.com")
		evs := enqueue(t, s, dueEvent(d1, l, "one", now, now), dueEvent(d2, l, "two", now, now))
		leased, err := s.ClaimEvents(ctx, d1.ID, now, time.Minute, 10, nil)
		if err != nil || len(leased.Events) != 1 {
			t.Fatalf("claim = %+v, %v", leased.Events, err)
		}
		junkAt := now.Add(time.Minute)
		// changeLead records c on lead l, read with updated_at expect.
		changeLead := func(l models.Lead, c models.StageChange, expect time.Time, ch store.EventChanges) (models.Lead, error) {
			read, err := s.ReadStages(ctx, a.ID, nil, 1)
			if err != nil {
				return l, err
			}
			c.ID = read.ChangeIDs[0]
			after := l
			after.Junk, after.JunkOverride = c.Stage == models.StageJunk, c.Stage
			_, err = s.ChangeLeads(ctx, a.ID, map[int64]time.Time{l.ID: expect}, []store.LeadChange{{Change: &c, After: &after, Events: ch}})
			return after, err
		}
		changed, err := changeLead(l, models.StageChange{AccountID: a.ID, LeadID: l.ID, Stage: models.StageJunk, OccurredAt: junkAt},
			l.UpdatedAt, store.EventChanges{Cancel: []store.EventCancel{{ID: evs[0].ID, Reason: "junk"}, {ID: evs[1].ID, Reason: "junk"}}})
		if err != nil || !changed.Junk {
			t.Fatalf("change lead = %+v, %v; want it junk", changed, err)
		}
		if _, err := changeLead(l, models.StageChange{AccountID: a.ID, LeadID: l.ID, Stage: models.StageNotJunk, OccurredAt: junkAt},
			l.UpdatedAt, store.EventChanges{Requeue: []int64{evs[1].ID}}); !errors.Is(err, store.ErrStale) {
			t.Fatalf("a decision from the lead before the change: %v; want ErrStale", err)
		}
		if cs, err := s.StageChanges(ctx, a.ID, l.ID); err != nil || len(cs) != 1 {
			t.Errorf("stage changes = %v, %v; want the one that was not stale", cs, err)
		}
		status := func(id int64) models.EventStatus {
			t.Helper()
			e, err := s.Event(ctx, a.ID, id)
			if err != nil {
				t.Fatal(err)
			}
			return e.Status
		}
		if got := status(evs[0].ID); got != models.EventSending {
			t.Errorf("the leased event = %s; want still sending", got)
		}
		if got := status(evs[1].ID); got != models.EventFailed {
			t.Errorf("the queued event = %s; want failed", got)
		}
		if c, err := s.ClaimEvents(ctx, d2.ID, now.Add(time.Second), time.Minute, 10, nil); err != nil || len(c.Events) != 0 {
			t.Errorf("claim of the failed event = %+v, %v; want nothing", c.Events, err)
		}
		// The leased one comes back unsent, as from a paused dataset.
		if err := s.SettleEvents(ctx, leased, nil, "", now, []store.Outcome{{ID: evs[0].ID, Status: models.EventQueued,
			Error: "paused", NextAttemptAt: now, Untried: true}}); err != nil {
			t.Fatal(err)
		}
		if e, _ := s.Event(ctx, a.ID, evs[0].ID); e.Status != models.EventQueued || e.Attempts != 0 {
			t.Errorf("put back = %s after %d attempts; want queued, no attempt counted", e.Status, e.Attempts)
		}
		if _, err := changeLead(changed, models.StageChange{AccountID: a.ID, LeadID: l.ID, Stage: models.StageNotJunk, OccurredAt: junkAt},
			changed.UpdatedAt, store.EventChanges{Requeue: []int64{evs[1].ID}}); err != nil {
			t.Fatal(err)
		}
		if got := status(evs[1].ID); got != models.EventQueued {
			t.Errorf("after not junk = %s; want queued", got)
		}
		if c, err := s.ClaimEvents(ctx, d2.ID, now.Add(2*time.Second), time.Minute, 10, nil); err != nil || len(c.Events) != 1 || c.Events[0].ID != evs[1].ID {
			t.Errorf("claim after not junk = %+v, %v; want the event again", c.Events, err)
		}
	})
}

// A claimed event whose lead is not in its account is claimed all the
// same, and its lead is not found (the dispatcher fails it with a reason),
// instead of being leased, unseen, again and again.
func TestClaimWithoutTheLead(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeLive)
		now := time.Now().UTC()
		other := storedLead(t, s, b, now, "other@example.com")
		enqueue(t, s, dueEvent(d, other, "stray", now, now))
		c, err := s.ClaimEvents(ctx, d.ID, now, time.Minute, 10, nil)
		if err != nil || len(c.Events) != 1 {
			t.Fatalf("claim = %d events, %v; want the event", len(c.Events), err)
		}
		if leads, err := s.PayloadLeads(ctx, a.ID, []int64{c.Events[0].LeadID}); err != nil || len(leads) != 0 {
			t.Errorf("payload leads = %v, %v; want none: the lead is another account's", leads, err)
		}
	})
}

// A payload prepared when an event was queued is claimed with the event,
// and dropped (its stamp reset) once the lead changes or a person retries
// the event: the dispatcher then builds it from the lead as it is.
func TestPreparedPayloadsAreDroppedWhenTheLeadChanges(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeLive)
		now := time.Now().UTC()
		prepared := func(l models.Lead, id string) models.Event {
			e := dueEvent(d, l, id, now.Add(-time.Hour), now)
			// A stage event: the stage change below is decided as every
			// change is, and no decision about rules cancels it.
			e.Origin = models.OriginStage
			e.Payload, e.PayloadStamp = `{"event_id":"`+id+`"}`, 42
			return enqueue(t, s, e)[0]
		}
		stamp := func(id int64) int64 {
			t.Helper()
			e, err := s.Event(ctx, a.ID, id)
			if err != nil {
				t.Fatal(err)
			}
			return e.PayloadStamp
		}

		staged, saved, retried := storedLead(t, s, a, now, "staged@example.com"), storedLead(t, s, a, now, "saved@example.com"),
			storedLead(t, s, a, now, "retried@example.com")
		evStaged, evSaved, evRetried := prepared(staged, "staged"), prepared(saved, "saved"), prepared(retried, "retried")

		c, err := s.ClaimEvents(ctx, d.ID, now, time.Minute, 10, nil)
		if err != nil || len(c.Events) != 3 || c.Events[0].Payload != `{"event_id":"staged"}` || c.Events[0].PayloadStamp != 42 {
			t.Fatalf("claim = %+v, %v; want the 3 events with their prepared payloads", c.Events, err)
		}
		if err := s.SettleEvents(ctx, c, nil, "", now, []store.Outcome{
			{ID: evStaged.ID, Status: models.EventQueued, NextAttemptAt: now, Untried: true},
			{ID: evSaved.ID, Status: models.EventQueued, NextAttemptAt: now, Untried: true},
			{ID: evRetried.ID, Status: models.EventFailed, Error: "Meta refused", Payload: `{"event_id":"retried"}`},
		}); err != nil {
			t.Fatal(err)
		}
		if got := stamp(evStaged.ID); got != 42 {
			t.Fatalf("stamp after a requeue = %d; want 42 kept", got)
		}

		if _, err := decidetest.Mark(ctx, s, models.StageChange{AccountID: a.ID, LeadID: staged.ID, Stage: "qualified", OccurredAt: now}); err != nil {
			t.Fatal(err)
		}
		saved.City = "Austin"
		if err := s.SaveLead(ctx, &saved); err != nil {
			t.Fatal(err)
		}
		if n, err := s.RetryEvents(ctx, a.ID, []int64{evRetried.ID}, now); err != nil || n != 1 {
			t.Fatalf("retry = %d, %v; want 1", n, err)
		}
		for name, id := range map[string]int64{"stage change": evStaged.ID, "saved lead": evSaved.ID, "retry": evRetried.ID} {
			if got := stamp(id); got != 0 {
				t.Errorf("after a %s the stamp is %d; want 0", name, got)
			}
		}
	})
}
