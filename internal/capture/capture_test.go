package capture

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/leadsignal/leadsignal/internal/decide/decidetest"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nyaruka/phonenumbers"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/junk"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

func setup(t *testing.T, s *store.Store) (models.Account, models.Dataset) {
	t.Helper()
	acc, err := s.CreateAccount(t.Context(), models.Account{Slug: "acme", Name: "Acme", Timezone: "UTC", Currency: "USD", DefaultCountry: "US", JunkSettings: "{}"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
	if err := s.CreateDataset(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	return acc, d
}

func valid(t *testing.T, r Request) Validated {
	t.Helper()
	v, err := r.Validate(time.Now())
	if err != nil {
		t.Fatalf("Validate(%+v) = %v", r, err)
	}
	return v
}

func strp(s string) *string { return &s }

// webLead is a website lead as a real form handler posts it: with the
// visitor's IP address and user agent and the page's URL, all that Meta
// needs on a website event.
func webLead(email string) Request {
	return Request{Email: email, FirstName: "Ann", ClientIP: "203.0.113.7", ClientUserAgent: "Mozilla/5.0",
		EventSourceURL: "https://example.com/form"}
}

// TestConcurrentCapturesShareBatches posts many leads at once: every one is
// stored with its event, and of two leads of one person exactly one is a
// duplicate, whichever batch they fell in.
func TestConcurrentCapturesShareBatches(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		acc, _ := setup(t, s)
		c := New(s, nil, nil)
		var mu sync.Mutex
		largest := 0
		c.batch.observe = func(_ int64, size int) {
			mu.Lock()
			defer mu.Unlock()
			largest = max(largest, size)
		}
		const n = 40
		results := make([]Result, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				email := fmt.Sprintf("lead%d@example.com", i)
				if i >= n-4 {
					email = fmt.Sprintf("lead%d@example.com", i-4) // the same person again
				}
				r := webLead(email)
				r.ExternalID = strp(fmt.Sprint("f-", i))
				res, err := c.Capture(t.Context(), acc, valid(t, r))
				if err != nil {
					t.Errorf("capture %d: %v", i, err)
				}
				results[i] = res
			})
		}
		wg.Wait()
		if largest < 2 {
			t.Errorf("largest batch %d; 40 simultaneous captures should share transactions", largest)
		}
		ids := map[int64]bool{}
		dups := map[int]int{}
		for i, r := range results {
			if r.Outcome != Created || r.Lead.ID == 0 || ids[r.Lead.ID] {
				t.Fatalf("capture %d = %+v", i, r)
			}
			ids[r.Lead.ID] = true
			if r.Lead.Junk {
				key := i
				if i >= n-4 {
					key = i - 4
				}
				dups[key]++
				continue
			}
			if len(r.Events) != 1 || r.Events[0].Status != models.EventQueued || r.Events[0].Dataset != "Main" {
				t.Errorf("capture %d events = %+v; want one queued for Main", i, r.Events)
			}
		}
		for k := n - 8; k < n-4; k++ {
			if dups[k] != 1 {
				t.Errorf("person %d: %d leads flagged duplicate; want exactly 1 of 2", k, dups[k])
			}
		}
		if len(dups) != 4 {
			t.Errorf("duplicates flagged for %d people; want 4", len(dups))
		}
	})
}

// TestCaptureBatch drives one batch with every kind of lead in it.
func TestCaptureBatch(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, d := setup(t, s)
		c := New(s, nil, nil)
		settings, _ := JunkSettings(acc)
		// Already stored: a complete lead and a partial one.
		old, err := c.Capture(ctx, acc, valid(t, Request{ExternalID: strp("old"), Email: "old@example.com"}))
		if err != nil {
			t.Fatal(err)
		}
		part, err := c.Capture(ctx, acc, valid(t, Request{ExternalID: strp("part"), Email: "part@example.com", Partial: true}))
		if err != nil {
			t.Fatal(err)
		}
		reqs := []Request{
			{ExternalID: strp("new"), Email: "new@example.com"},                     // 0 created
			{ExternalID: strp("new"), Email: "new@example.com"},                     // 1 same external_id: existing
			{ExternalID: strp("old"), Email: "old@example.com"},                     // 2 existing
			{ExternalID: strp("part"), Email: "part@example.com", FirstName: "Pat"}, // 3 completes the partial
			{Email: "twice@example.com"},                                            // 4 created
			{Email: "TWICE@example.com"},                                            // 5 duplicate of 4
			{Email: "bot@example.com", Honeypot: "x"},                               // 6 junk, no event
			{ExternalID: strp("p2"), Email: "partial2@example.com", Partial: true},  // 7 partial, no event
			{Email: "old@example.com"},                                              // 8 duplicate of the stored lead
		}
		var batch []*job
		for _, r := range reqs {
			batch = append(batch, testJob(t, acc, valid(t, r), settings))
		}
		results := runBatch(c, batch)
		want := []struct {
			outcome Outcome
			junk    []junk.Signal
			events  int
		}{
			{Created, nil, 1}, {Existing, nil, 1}, {Existing, nil, 1}, {Upgraded, nil, 1}, {Created, nil, 1},
			{Created, []junk.Signal{junk.Duplicate}, 0}, {Created, []junk.Signal{junk.Honeypot}, 0}, {Created, nil, 0},
			{Created, []junk.Signal{junk.Duplicate}, 0},
		}
		for i, w := range want {
			r := results[i]
			if r.err != nil {
				t.Fatalf("job %d: %v", i, r.err)
			}
			var sigs []junk.Signal
			for _, rs := range r.res.Reasons {
				sigs = append(sigs, rs.Signal)
			}
			if r.res.Outcome != w.outcome || fmt.Sprint(sigs) != fmt.Sprint(w.junk) || len(r.res.Events) != w.events {
				t.Errorf("job %d = %s %v %d events; want %s %v %d", i, r.res.Outcome, sigs, len(r.res.Events), w.outcome, w.junk, w.events)
			}
		}
		if results[1].res.Lead.ID != results[0].res.Lead.ID || results[2].res.Lead.ID != old.Lead.ID || results[3].res.Lead.ID != part.Lead.ID {
			t.Error("repeats must answer with the stored lead")
		}
		if l, _ := s.Lead(ctx, acc.ID, part.Lead.ID); l.Partial || l.FirstName != "Pat" {
			t.Errorf("completed partial lead = partial %v name %q", l.Partial, l.FirstName)
		}
		// Event ids follow docs/api.md ("Event ids"): external_id when given,
		// else the lead id.
		if got, want := results[0].res.Events[0].EventID, capi.EventID(d.PixelID, "Lead", "new"); got != want {
			t.Errorf("event id %s; want %s", got, want)
		}
		if got, want := results[4].res.Events[0].EventID, capi.EventID(d.PixelID, "Lead", fmt.Sprint("lead:", results[4].res.Lead.ID)); got != want {
			t.Errorf("event id %s; want %s", got, want)
		}
	})
}

// TestBatchFallsBackLeadByLead: when the batch's transaction fails (here a
// lead of an account that is gone), nothing of it is kept and every lead is
// captured on its own: the others are stored, the bad one gets the error.
func TestBatchFallsBackLeadByLead(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, _ := setup(t, s)
		c := New(s, nil, nil)
		settings, _ := JunkSettings(acc)
		gone := acc
		gone.ID = 999_999
		jobs := []*job{
			testJob(t, acc, valid(t, Request{ExternalID: strp("fine"), Email: "fine@example.com"}), settings),
			testJob(t, gone, valid(t, Request{ExternalID: strp("gone"), Email: "gone@example.com"}), settings),
			testJob(t, acc, valid(t, Request{Email: "also@example.com"}), settings),
		}
		results := runBatch(c, jobs)
		for _, i := range []int{0, 2} {
			if r := results[i]; r.err != nil || r.res.Outcome != Created || len(r.res.Events) != 1 {
				t.Errorf("job %d after fallback = %+v, %v; want created with its event", i, r.res, r.err)
			}
		}
		if results[1].err == nil {
			t.Error("the lead of an account that is gone was captured")
		}
		n, _ := s.CountLeads(ctx, acc.ID, store.LeadFilter{}, 1_000_000)
		if n != 2 {
			t.Errorf("%d leads; want 2 (no copies from the failed batch)", n)
		}
	})
}

// An event id already taken (left by a deleted lead, say) is left as it is:
// the lead is still captured, and nothing is queued twice.
func TestCaptureLeavesATakenEventID(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, d := setup(t, s)
		c := New(s, nil, nil)
		seed, err := c.Capture(ctx, acc, valid(t, Request{Email: "seed@example.com"}))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.EnqueueEvents(ctx, []models.Event{{AccountID: acc.ID, DatasetID: d.ID, LeadID: seed.Lead.ID, Origin: models.OriginDefault,
			EventName: "Lead", EventID: capi.EventID(d.PixelID, "Lead", "clash"), EventTime: time.Now()}}); err != nil {
			t.Fatal(err)
		}
		r, err := c.Capture(ctx, acc, valid(t, Request{ExternalID: strp("clash"), Email: "clash@example.com"}))
		if err != nil || r.Outcome != Created {
			t.Fatalf("capture = %+v, %v; want created", r, err)
		}
		if evs, err := s.LeadEvents(ctx, acc.ID, r.Lead.ID); err != nil || len(evs) != 0 {
			t.Errorf("the new lead's events = %+v, %v; want none (the event id is the seed's)", evs, err)
		}
		if evs, err := s.LeadEvents(ctx, acc.ID, seed.Lead.ID); err != nil || len(evs) != 2 {
			t.Errorf("the seed's events = %d, %v; want its own and the clash, as they were", len(evs), err)
		}
	})
}

// runBatch writes a batch as the writer does and returns each job's answer.
func runBatch(c *Capturer, batch []*job) []jobResult {
	c.write(batch)
	out := make([]jobResult, len(batch))
	for i, j := range batch {
		out[i] = <-j.done
	}
	return out
}

// testJob builds a job as Capture does, ready to be run without submit.
func testJob(t *testing.T, acc models.Account, v Validated, settings junk.Settings) *job {
	t.Helper()
	j, err := newJob(acc, v, settings)
	if err != nil {
		t.Fatal(err)
	}
	j.ctx, j.done = context.Background(), make(chan jobResult, 1)
	return j
}

// A write whose answer was lost is known to have committed when its
// reserved leads are stored; a conflict or nothing stored means it was not.
func TestCommittedAnyway(t *testing.T) {
	t.Parallel()
	s := storetest.NewPostgres(t)
	ctx := t.Context()
	acc, _ := setup(t, s)
	c := New(s, nil, func() {})
	_, ids, err := s.LookupCapture(ctx, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	leads := []models.Lead{
		{ID: ids[0], AccountID: acc.ID, Source: models.SourceWebsite, Email: "a@example.com", Fields: "{}", MatchKeys: "{}", JunkReasons: "[]"},
		{ID: ids[1], AccountID: acc.ID, Source: models.SourceWebsite, Email: "b@example.com", Fields: "{}", MatchKeys: "{}", JunkReasons: "[]"},
	}
	lost := fmt.Errorf("read answer: %w", context.DeadlineExceeded)
	if c.committedAnyway(ctx, lost, leads[0]) {
		t.Error("nothing is stored yet, but the write counts as committed")
	}
	if err := s.SaveCaptured(ctx, store.Captured{New: leads}); err != nil {
		t.Fatal(err)
	}
	if !c.committedAnyway(ctx, lost, leads[0]) {
		t.Error("the leads are stored, but the write does not count as committed")
	}
	if c.committedAnyway(ctx, fmt.Errorf("insert: %w", store.ErrConflict), leads[0]) {
		t.Error("a conflict counts as committed")
	}
}

// Capture prepares each event's payload when it queues it, exactly as the
// dispatcher would build it from the stored lead, on the batch path, the
// lead-by-lead path and when a person marks a junk lead not junk. An event
// Meta would refuse is held back at once: failed, with its reason and its
// JSON, and no stamp (nothing to send as it is).
func TestCapturePreparesPayloads(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, d := setup(t, s)
		c := New(s, nil, nil)
		settings, _ := JunkSettings(acc)
		web := webLead
		results := runBatch(c, []*job{
			testJob(t, acc, valid(t, web("batch@example.com")), settings),
			testJob(t, acc, valid(t, Request{Email: "nourl@example.com"}), settings),
		})
		one, err := c.Capture(ctx, acc, valid(t, web("one@example.com")))
		if err != nil {
			t.Fatal(err)
		}
		bot := web("bot@example.com")
		bot.Honeypot = "x"
		junked, err := c.Capture(ctx, acc, valid(t, bot))
		if err != nil || len(junked.Events) != 0 {
			t.Fatalf("junk capture = %+v, %v; want no event", junked, err)
		}
		if _, err := decidetest.Mark(ctx, s, models.StageChange{AccountID: acc.ID, LeadID: junked.Lead.ID, Stage: models.StageNotJunk, OccurredAt: time.Now()}); err != nil {
			t.Fatal(err)
		}

		check := func(name string, leadID int64, wantPrepared bool) {
			t.Helper()
			l, err := s.Lead(ctx, acc.ID, leadID)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := s.LeadEvents(ctx, acc.ID, leadID)
			if err != nil || len(evs) != 1 {
				t.Fatalf("%s: events = %v, %v; want 1", name, evs, err)
			}
			e := evs[0]
			keys, err := normalize.ParseKeys([]byte(l.MatchKeys))
			if err != nil {
				t.Fatal(err)
			}
			_, body, err := capi.Prepare(capi.BuildInput{Account: acc, Dataset: d, Lead: l, Keys: keys, Event: e})
			if !wantPrepared {
				if e.Status != models.EventFailed || e.LastError != "not sent: "+fmt.Sprint(err) || e.Payload != string(body) || e.PayloadStamp != 0 {
					t.Errorf("%s: %s %q payload %s stamp %d; want failed, %q, %s, no stamp", name, e.Status, e.LastError, e.Payload, e.PayloadStamp,
						"not sent: "+fmt.Sprint(err), body)
				}
				return
			}
			if err != nil || e.Payload != string(body) || e.PayloadStamp != capi.Stamp(acc, d) {
				t.Errorf("%s: prepared %s (stamp %d); want %s (stamp %d), %v", name, e.Payload, e.PayloadStamp, body, capi.Stamp(acc, d), err)
			}
		}
		check("batch", results[0].res.Lead.ID, true)
		check("no URL", results[1].res.Lead.ID, false)
		check("one by one", one.Lead.ID, true)
		check("not junk", junked.Lead.ID, true)
	})
}

// A website lead posted without event_source_url takes the account's
// Website URL, stored on the lead so that its page and its payload agree,
// on the batch path and the lead-by-lead path alike. A lead's own URL wins,
// and a lead from another source gets none.
func TestCaptureFillsWebsiteURL(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, _ := setup(t, s)
		acc.WebsiteURL = "https://acme.example/contact"
		acc, err := s.UpdateAccountSettings(ctx, acc)
		if err != nil {
			t.Fatal(err)
		}
		c := New(s, nil, nil)
		noURL := func(email string) Request {
			r := webLead(email)
			r.EventSourceURL = ""
			return r
		}
		own := webLead("own@example.com")
		crm := noURL("crm@example.com")
		crm.Source = string(models.SourceCRM)
		batched, err := c.Capture(ctx, acc, valid(t, noURL("batch@example.com")))
		if err != nil {
			t.Fatal(err)
		}
		one, err := c.Capture(ctx, acc, valid(t, noURL("one@example.com")))
		if err != nil {
			t.Fatal(err)
		}
		kept, err := c.Capture(ctx, acc, valid(t, own))
		if err != nil {
			t.Fatal(err)
		}
		other, err := c.Capture(ctx, acc, valid(t, crm))
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name string
			res  Result
			want string
		}{
			{"batch", batched, acc.WebsiteURL},
			{"one by one", one, acc.WebsiteURL},
			{"own URL", kept, "https://example.com/form"},
			{"crm", other, ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				l, err := s.Lead(ctx, acc.ID, tt.res.Lead.ID)
				if err != nil {
					t.Fatal(err)
				}
				if l.EventSourceURL != tt.want || tt.res.Lead.EventSourceURL != tt.want {
					t.Errorf("event_source_url stored %q, answered %q; want %q", l.EventSourceURL, tt.res.Lead.EventSourceURL, tt.want)
				}
				evs, err := s.LeadEvents(ctx, acc.ID, l.ID)
				if err != nil || len(evs) != 1 {
					t.Fatalf("events = %v, %v; want 1", evs, err)
				}
				if evs[0].Status != models.EventQueued || tt.res.Events[0].Reason != "" {
					t.Errorf("event %s %q, answered %+v; want queued", evs[0].Status, evs[0].LastError, tt.res.Events[0])
				}
				var sent struct {
					URL string `json:"event_source_url"`
				}
				if err := json.Unmarshal([]byte(evs[0].Payload), &sent); err != nil || sent.URL != tt.want {
					t.Errorf("payload's event_source_url = %q (%v); want %q", sent.URL, err, tt.want)
				}
			})
		}
	})
}

// An event Meta would refuse is held back at capture, exactly as the
// dispatcher would hold it, and the reply says so with the reason; the
// batch and the lead-by-lead paths agree. The dispatcher leaves it alone
// until a person retries it, and a retry after the fix (here the account's
// Website URL) sends it.
func TestCaptureHoldsBackWhatMetaWouldRefuse(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, _ := setup(t, s)
		c := New(s, nil, nil)
		const reason = "not sent: event_source_url: required for website events"
		noURL := webLead("batch@example.com")
		noURL.EventSourceURL, noURL.ExternalID = "", strp("form-1")
		batched, err := c.Capture(ctx, acc, valid(t, noURL))
		if err != nil {
			t.Fatal(err)
		}
		noURL.Email, noURL.ExternalID = "one@example.com", strp("form-2")
		one, err := c.Capture(ctx, acc, valid(t, noURL))
		if err != nil {
			t.Fatal(err)
		}
		// The same post again answers with the stored event, reason and all.
		noURL.Email, noURL.ExternalID = "batch@example.com", strp("form-1")
		again, err := c.Capture(ctx, acc, valid(t, noURL))
		if err != nil || again.Outcome != Existing {
			t.Fatalf("repeat = %+v, %v; want the existing lead", again, err)
		}
		fine, err := c.Capture(ctx, acc, valid(t, webLead("fine@example.com")))
		if err != nil {
			t.Fatal(err)
		}

		for _, tt := range []struct {
			name string
			res  Result
		}{{"batch", batched}, {"one by one", one}, {"repeat", again}} {
			if len(tt.res.Events) != 1 {
				t.Fatalf("%s: events %+v; want 1", tt.name, tt.res.Events)
			}
			if q := tt.res.Events[0]; q.Status != models.EventFailed || q.Reason != reason {
				t.Errorf("%s: answered %+v; want failed with %q", tt.name, q, reason)
			}
			evs, err := s.LeadEvents(ctx, acc.ID, tt.res.Lead.ID)
			if err != nil || len(evs) != 1 || evs[0].Status != models.EventFailed || evs[0].LastError != reason || evs[0].Payload == "" {
				t.Errorf("%s: stored %+v, %v; want failed with the reason and the JSON", tt.name, evs, err)
			}
		}
		b, _ := json.Marshal(batched.Events[0])
		if !strings.Contains(string(b), `"status":"failed","reason":"`+reason+`"`) {
			t.Errorf("reply event %s; want its status and reason", b)
		}
		if b, _ := json.Marshal(fine.Events[0]); strings.Contains(string(b), "reason") || fine.Events[0].Status != models.EventQueued {
			t.Errorf("reply event %s; want queued, without a reason", b)
		}
		counts, err := s.EventCounts(ctx, acc.ID, store.EventFilter{}, 1_000_000)
		if err != nil || counts[models.EventHeldBack] != 2 || counts[models.EventQueued] != 1 {
			t.Errorf("counts %v, %v; want 2 held back, 1 queued", counts, err)
		}

		// The dispatcher takes the queued event only. Retried without a
		// fix, it holds the other back just as capture did.
		d := dispatch.New(dispatch.Options{Store: s, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if n, err := d.Drain(ctx); err != nil || n != 1 {
			t.Fatalf("drain = %d, %v; want the one queued event", n, err)
		}
		held, _ := s.LeadEvents(ctx, acc.ID, batched.Lead.ID)
		if _, err := s.RetryEvents(ctx, acc.ID, []int64{held[0].ID}, time.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		rebuilt, _ := s.LeadEvents(ctx, acc.ID, batched.Lead.ID)
		if e := rebuilt[0]; e.Status != models.EventFailed || e.LastError != held[0].LastError || e.Payload != held[0].Payload {
			t.Errorf("held by the dispatcher: %s %q %s; capture held it %s %q %s", e.Status, e.LastError, e.Payload,
				held[0].Status, held[0].LastError, held[0].Payload)
		}

		// The owner sets the Website URL: the leads waiting for it get it,
		// and a retry sends their events with it.
		acc.WebsiteURL = "https://acme.example/contact"
		if _, err := s.UpdateAccountSettings(ctx, acc); err != nil {
			t.Fatal(err)
		}
		if l, _ := s.Lead(ctx, acc.ID, one.Lead.ID); l.EventSourceURL != acc.WebsiteURL {
			t.Errorf("lead's event_source_url = %q after the setting; want %q", l.EventSourceURL, acc.WebsiteURL)
		}
		if n, err := s.RetryEvents(ctx, acc.ID, nil, time.Now()); err != nil || n != 2 {
			t.Fatalf("retry = %d, %v; want 2", n, err)
		}
		if _, err := d.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		for _, r := range []Result{batched, one} {
			evs, _ := s.LeadEvents(ctx, acc.ID, r.Lead.ID)
			if e := evs[0]; e.Status != models.EventDryRun || !strings.Contains(e.Payload, `"event_source_url":"https://acme.example/contact"`) {
				t.Errorf("after the fix and a retry: %s %q %s; want it sent (dry run) with the Website URL", e.Status, e.LastError, e.Payload)
			}
		}
	})
}

// The junk signals get a phone's national significant number as
// libphonenumber reads it, Italy's leading zero included.
func TestJunkInputNationalNumber(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"+1 415 692 4281", "+44 20 7946 0958", "+39 06 4991 0000", "+49 30 901820", "+61 2 9374 4000"} {
		keys := normalize.Normalize(normalize.Input{Phone: raw, CapturedAt: time.Now()})
		pn, err := phonenumbers.Parse(raw, "")
		if err != nil {
			t.Fatal(err)
		}
		want := phonenumbers.GetNationalSignificantNumber(pn)
		if got := junkInput(keys, Validated{}).PhoneNational; got != want {
			t.Errorf("%s: national number %q; want %q", raw, got, want)
		}
	}
}

// Each account has its own writer: while one account's batch is held up
// (its rules costly to match, say), another account's captures are
// written and answered.
func TestAccountsWriteSideBySide(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		slow, _ := setup(t, s)
		other, err := s.CreateAccount(t.Context(), models.Account{Slug: "other", Name: "Other", Timezone: "UTC", Currency: "USD", JunkSettings: "{}"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		c := New(s, nil, nil)
		held, release := make(chan struct{}), make(chan struct{})
		c.batch.observe = func(accountID int64, _ int) {
			if accountID == slow.ID {
				close(held)
				<-release
			}
		}
		slowDone := make(chan error, 1)
		go func() {
			_, err := c.Capture(t.Context(), slow, valid(t, webLead("slow@example.com")))
			slowDone <- err
		}()
		<-held
		res, err := c.Capture(t.Context(), other, valid(t, webLead("quick@example.com")))
		if err != nil || res.Outcome != Created {
			t.Fatalf("the other account's capture while the first is held = %+v, %v", res, err)
		}
		select {
		case err := <-slowDone:
			t.Fatalf("the held capture finished early: %v", err)
		default:
		}
		close(release)
		if err := <-slowDone; err != nil {
			t.Fatal(err)
		}
	})
}
