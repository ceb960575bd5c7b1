package store_test

import (
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/decide/decidetest"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// noDrift fails the test when a counts table differs from its definition.
func noDrift(t *testing.T, s *store.Store, when string) {
	t.Helper()
	drift, err := s.CountsDrift(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range drift {
		t.Errorf("%s: %s", when, d)
	}
}

func TestCampaign(t *testing.T) {
	t.Parallel()
	tests := []struct{ url, want string }{
		{"", ""},
		{"https://a.com/p", ""},
		{"https://a.com/p?utm_campaign=spring", "spring"},
		{"https://a.com/p?utm_source=fb&utm_campaign=spring%20sale&x=1", "spring%20sale"},
		{"https://a.com/p?xutm_campaign=no&utm_campaign=yes#frag", "yes"},
		{"https://a.com/p?utm_campaign=a#b&utm_campaign=c", "a"},
		{"https://a.com/p?utm_campaign=", ""},
		{"https://a.com/p?a=1&utm_campaign=q?utm_campaign=y", "q?utm_campaign=y"},
		{"https://a.com/p?utm_campaign=x&utm_campaign=y", "x"},
		{"https://a.com/p#utm_campaign=z", ""},
		{"https://a.com/p?UTM_CAMPAIGN=up&utm_campaign=low", "low"},
		{"https://a.com/p?utm_campaign=h#", "h"},
		{"utm_campaign=bare", ""},
		{"https://a.com/p?x=1&utm_campaign=late?utm_campaign=early", "late?utm_campaign=early"},
		{"https://a.com/p?utm_campaign=first&x=1#&utm_campaign=second", "first"},
		{"https://a.com/p?utm_campaign=#x", ""},
		{"https://a.com/p?utm_campaign=été&x", "été"},
		{"https://a.com/p?utm_campaign=a2&b#c", "a2"},
		{"https://a.com/p?utm_campaign=a3#b&c", "a3"},
		{"?utm_campaign=start", "start"},
		{"&utm_campaign=amp", "amp"},
		{"https://a.com/p?utm_campaignx=no", ""},
	}
	for _, tt := range tests {
		if got := store.Campaign(tt.url); got != tt.want {
			t.Errorf("Campaign(%q) = %q; want %q", tt.url, got, tt.want)
		}
	}
	// The database's utm_campaign is the same function.
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, _ := twoAccounts(t, s)
		for _, tt := range tests {
			if got, err := s.CampaignSQL(t.Context(), tt.url); err != nil || got != tt.want {
				t.Errorf("utm_campaign(%q) = %q, %v; want %q", tt.url, got, err, tt.want)
			}
			l := lead(a, time.Now().UTC(), "c@example.com")
			l.EventSourceURL = tt.url
			if err := s.InsertLead(t.Context(), &l); err != nil {
				t.Fatal(err)
			}
			n, err := s.CountLeads(t.Context(), a.ID, store.LeadFilter{Campaign: tt.want}, 100)
			if err != nil || tt.want != "" && n != 1 {
				t.Errorf("leads with campaign %q = %d, %v; want 1 (%q)", tt.want, n, err, tt.url)
			}
		}
	})
}

func TestJunkSignals(t *testing.T) {
	t.Parallel()
	tests := []struct{ reasons, want string }{
		{"", ""}, {"[]", ""}, {"null", ""}, {`{"signal":"x"}`, ""},
		{`[{"signal":"too_fast","message":"Filled in 0.8 s"}]`, "too_fast"},
		{`[{"signal":"too_fast","message":"a"},{"signal":"honeypot","message":"b"}]`, "too_fast,honeypot"},
	}
	for _, tt := range tests {
		if got := store.JunkSignals(tt.reasons); got != tt.want {
			t.Errorf("JunkSignals(%q) = %q; want %q", tt.reasons, got, tt.want)
		}
	}
}

// Every way a lead, a stage change or an event is written keeps the counts
// equal to their definitions: capture, stage changes, the verdict, a
// partial lead completed (its capture time, URL and keys move its events
// and stage changes), and every status an event can settle in.
func TestCountsFollowEveryWrite(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeLive)
		db := newDataset(t, s, b, models.ModeLive)
		now := time.Now().UTC().Truncate(time.Second)
		noDrift(t, s, "empty")

		var leads []models.Lead
		for i, email := range []string{"a@x.com", "b@x.com", "c@x.com", "d@x.com", "e@x.com"} {
			l := lead(a, now.Add(-time.Duration(i)*26*time.Hour), email)
			l.EventSourceURL = "https://x.com/?utm_campaign=c" + string(rune('0'+i%2))
			l.FBP = "fb.1.1.1"
			if i == 3 {
				l.Junk, l.JunkReasons = true, `[{"signal":"too_fast","message":"Filled in 0.8 s"},{"signal":"honeypot","message":"x"}]`
			}
			if i == 4 {
				l.Partial = true
			}
			if err := s.InsertLead(ctx, &l); err != nil {
				t.Fatal(err)
			}
			leads = append(leads, l)
		}
		other := storedLead(t, s, b, now, "z@x.com")
		noDrift(t, s, "leads inserted")

		var evs []models.Event
		for i, l := range leads {
			evs = append(evs, dueEvent(d, l, "lead-"+l.Email, now.Add(-time.Duration(i)*time.Minute), now))
		}
		evs = append(evs, dueEvent(db, other, "other", now, now))
		stored := enqueue(t, s, evs...)
		noDrift(t, s, "events queued")

		c, err := s.ClaimEvents(ctx, d.ID, now, time.Minute, 10, nil)
		if err != nil || len(c.Events) != 5 {
			t.Fatalf("claim = %d, %v; want 5", len(c.Events), err)
		}
		noDrift(t, s, "events claimed")
		req := models.SendRequest{AccountID: a.ID, DatasetID: d.ID, Kind: "batch", StartedAt: now, Payload: `[]`}
		if err := s.InsertSendRequest(ctx, &req); err != nil {
			t.Fatal(err)
		}
		outs := []store.Outcome{
			{ID: stored[0].ID, Status: models.EventSent},
			{ID: stored[1].ID, Status: models.EventFailed, Error: "refused"},
			{ID: stored[2].ID, Status: models.EventExpired, Error: "too old"},
			{ID: stored[3].ID, Status: models.EventQueued, Error: "HTTP 500", NextAttemptAt: now.Add(time.Hour)},
			{ID: stored[4].ID, Status: models.EventDryRun, Payload: `{}`},
		}
		if err := s.SettleEvents(ctx, c, &req.ID, "trace", now, outs); err != nil {
			t.Fatal(err)
		}
		noDrift(t, s, "events settled")
		if err := s.CompactCounts(ctx); err != nil {
			t.Fatal(err)
		}
		noDrift(t, s, "deltas merged")

		for _, st := range []string{models.StageQualified, models.StageWon, models.StageJunk} {
			if _, err := decidetest.Mark(ctx, s, models.StageChange{AccountID: a.ID, LeadID: leads[0].ID, Stage: st,
				OccurredAt: now.Add(3 * time.Minute)}); err != nil {
				t.Fatal(err)
			}
		}
		noDrift(t, s, "stage changes")

		// The partial lead completed: a new capture time, URL and keys.
		l := leads[4]
		l.Partial, l.CreatedAt = false, now.Add(-time.Hour)
		l.EventSourceURL, l.EmailHash, l.FBC = "https://x.com/?utm_campaign=late", "", "fb.1.2.3"
		if err := s.SaveLead(ctx, &l); err != nil {
			t.Fatal(err)
		}
		l = leads[0]
		l.CreatedAt, l.Source = now.Add(-2*time.Hour), models.SourceInstantForm
		if err := s.SaveLead(ctx, &l); err != nil {
			t.Fatal(err)
		}
		noDrift(t, s, "leads completed")
		if err := s.CompactCounts(ctx); err != nil {
			t.Fatal(err)
		}
		noDrift(t, s, "deltas merged again")
	})
}

// Counts reads each span of each account apart: a lead one second before a
// week's start in the account's zone belongs to the week before, the first
// second of the week to it; filters keep a source or a campaign. The same
// whether the counts are deltas by quarter hour or merged by date, and
// after the account's zone changes.
func TestCountsBySpan(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		ny, err := time.LoadLocation("America/New_York")
		if err != nil {
			t.Fatal(err)
		}
		kolkata, err := time.LoadLocation("Asia/Kolkata") // +05:30
		if err != nil {
			t.Fatal(err)
		}
		for _, z := range []struct {
			acc *models.Account
			tz  string
		}{{&a, "America/New_York"}, {&b, "Asia/Kolkata"}} {
			z.acc.Timezone = z.tz
			if _, err := s.UpdateAccountSettings(ctx, *z.acc); err != nil {
				t.Fatal(err)
			}
		}
		now := time.Date(2026, 11, 25, 15, 0, 0, 0, ny) // a Wednesday
		weeks := store.WeekStarts(ny, now, 2)           // Nov 16, Nov 23
		monday := weeks[1]
		add := func(acc models.Account, at time.Time, src models.Source, url string, junk bool, stage string) models.Lead {
			l := lead(acc, at.UTC(), "x@example.com")
			l.Source, l.EventSourceURL, l.Junk, l.Stage = src, url, junk, stage
			if junk {
				l.JunkReasons = `[{"signal":"honeypot","message":"m"}]`
			}
			if err := s.InsertLead(ctx, &l); err != nil {
				t.Fatal(err)
			}
			return l
		}
		add(a, monday.Add(-time.Second), models.SourceWebsite, "https://a.com/?utm_campaign=spring", false, "")
		first := add(a, monday, models.SourceWebsite, "https://a.com/?utm_campaign=spring", false, models.StageQualified)
		add(a, monday.Add(time.Hour), models.SourceInstantForm, "", true, "")
		add(a, monday.Add(2*time.Hour), models.SourceWebsite, "https://a.com/?utm_campaign=fall", false, models.StageWon)
		// Account b's week starts at its own Monday, 10.5 hours earlier.
		bWeeks := store.WeekStarts(kolkata, now, 2)
		add(b, bWeeks[1].Add(-time.Second), models.SourceWebsite, "", false, "")
		add(b, bWeeks[1], models.SourceWebsite, "", false, "")
		if _, err := decidetest.Mark(ctx, s, models.StageChange{AccountID: a.ID, LeadID: first.ID, Stage: models.StageQualified,
			OccurredAt: monday.Add(50 * time.Hour).UTC()}); err != nil {
			t.Fatal(err)
		}
		spans := []store.Span{
			{AccountID: a.ID, From: weeks[0], To: weeks[1], Loc: ny}, {AccountID: a.ID, From: weeks[1], To: weeks[1].AddDate(0, 0, 7), Loc: ny},
			{AccountID: b.ID, From: bWeeks[0], To: bWeeks[1], Loc: kolkata}, {AccountID: b.ID, From: bWeeks[1], To: bWeeks[1].AddDate(0, 0, 7), Loc: kolkata},
		}
		sum := func(c store.Counts, span int, keep func(store.LeadCount) bool) int64 {
			var n int64
			for _, r := range c.Leads {
				if r.Span == span && keep(r) {
					n += r.N
				}
			}
			return n
		}
		all := func(store.LeadCount) bool { return true }
		check := func(when string) {
			t.Helper()
			c, err := s.Counts(ctx, spans, store.CountFilter{})
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range []int64{1, 3, 1, 1} {
				if got := sum(c, i, all); got != want {
					t.Errorf("%s: span %d: %d leads; want %d", when, i, got, want)
				}
			}
			if got := sum(c, 1, func(r store.LeadCount) bool { return r.Junk && r.JunkSignals == "honeypot" }); got != 1 {
				t.Errorf("%s: junk by honeypot this week = %d; want 1", when, got)
			}
			if len(c.Stages) != 1 || c.Stages[0].Span != 1 || c.Stages[0].Hours != 50 || c.Stages[0].N != 1 {
				t.Errorf("%s: stage delays = %+v; want one change 50 hours after its lead, this week", when, c.Stages)
			}
			for _, tt := range []struct {
				f    store.CountFilter
				want int64
			}{
				{store.CountFilter{Source: models.SourceInstantForm}, 1},
				{store.CountFilter{Campaign: "spring"}, 1},
				{store.CountFilter{Campaign: "fall", Source: models.SourceWebsite}, 1},
				{store.CountFilter{Campaign: "none"}, 0},
			} {
				c, err := s.Counts(ctx, spans[:2], tt.f)
				if err != nil {
					t.Fatal(err)
				}
				if got := sum(c, 1, all); got != tt.want {
					t.Errorf("%s: this week with %+v: %d leads; want %d", when, tt.f, got, tt.want)
				}
			}
			camps, err := s.Campaigns(ctx, a.ID, weeks[0], 10)
			if err != nil || len(camps) != 2 || camps[0] != "spring" {
				t.Errorf("%s: campaigns = %v, %v; want spring (2 leads) then fall", when, camps, err)
			}
		}
		check("deltas")
		if err := s.CompactCounts(ctx); err != nil {
			t.Fatal(err)
		}
		check("merged")
		noDrift(t, s, "merged")
		// Another zone for a: its merged rows are counted again by its
		// dates; b's stay as they are.
		a.Timezone = "Asia/Tokyo"
		if _, err := s.UpdateAccountSettings(ctx, a); err != nil {
			t.Fatal(err)
		}
		noDrift(t, s, "a's zone changed")
		tokyo, _ := time.LoadLocation("Asia/Tokyo")
		tw := store.WeekStarts(tokyo, now, 2)
		c, err := s.Counts(ctx, []store.Span{{AccountID: a.ID, From: tw[0], To: tw[1], Loc: tokyo},
			{AccountID: a.ID, From: tw[1], To: tw[1].AddDate(0, 0, 7), Loc: tokyo}}, store.CountFilter{})
		// In Tokyo (14 hours ahead) all four leads fall on Monday: this week.
		if err != nil || sum(c, 0, all) != 0 || sum(c, 1, all) != 4 {
			t.Errorf("a in Tokyo: %d and %d leads, %v; want 0 and 4", sum(c, 0, all), sum(c, 1, all), err)
		}
	})
}

// LastStageUpdates reads when stage changes were recorded, junk markers
// aside, one account apart from another.
func TestLastStageUpdates(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		now := time.Now().UTC().Truncate(time.Second)
		l := storedLead(t, s, a, now.Add(-72*time.Hour), "a@example.com")
		lb := storedLead(t, s, b, now.Add(-72*time.Hour), "b@example.com")
		for _, c := range []models.StageChange{
			{AccountID: a.ID, LeadID: l.ID, Stage: models.StageQualified, OccurredAt: now.Add(-time.Hour)},
			{AccountID: b.ID, LeadID: lb.ID, Stage: models.StageJunk, OccurredAt: now.Add(-time.Hour)},
		} {
			if _, err := decidetest.Mark(ctx, s, c); err != nil {
				t.Fatal(err)
			}
		}
		last, err := s.LastStageUpdates(ctx, []int64{a.ID, b.ID})
		if _, ok := last[b.ID]; err != nil || ok || last[a.ID].IsZero() || now.Sub(last[a.ID]) > time.Minute {
			t.Errorf("last stage updates = %v, %v; want account a's, just now, and none of b", last, err)
		}
	})
}

// Two transactions that change events of leads captured in the same
// quarter hour both go on at once: the counts triggers only insert, so a
// writer never waits for another on a shared counter row (nor can two
// deadlock taking two such rows in opposite orders).
func TestCountsNeverMakeWritersWait(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := storetest.MigratedPostgresURL(t)
	s, err := store.Open(ctx, store.Options{PostgresURL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, _ := twoAccounts(t, s)
	d := newDataset(t, s, a, models.ModeLive)
	now := time.Now().UTC()
	at := time.Unix(store.Bucket(now)*store.BucketSeconds, 0).UTC()
	var evs []models.Event
	for i := range 2 {
		l := storedLead(t, s, a, at, fmt.Sprintf("l%d@example.com", i))
		evs = append(evs, dueEvent(d, l, fmt.Sprintf("e%d", i), at, now))
	}
	stored := enqueue(t, s, evs...)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var txs []*sql.Tx
	for i, e := range stored {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
		txs = append(txs, tx)
		if _, err := tx.ExecContext(ctx, "SET LOCAL lock_timeout = '2s'"); err != nil {
			t.Fatal(err)
		}
		// Both move the same counts: queued down, failed up.
		if _, err := tx.ExecContext(ctx, "UPDATE unsent_events SET status = 'failed' WHERE event_id = $1", e.ID); err != nil {
			t.Fatalf("transaction %d waited: %v", i, err)
		}
	}
	for _, tx := range txs {
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	noDrift(t, s, "both committed")
	if err := s.CompactCounts(ctx); err != nil {
		t.Fatal(err)
	}
	noDrift(t, s, "merged")
}

// DayStart is a date's first instant, even where clocks skip midnight.
func TestDayStart(t *testing.T) {
	t.Parallel()
	santiago, err := time.LoadLocation("America/Santiago")
	if err != nil {
		t.Fatal(err)
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		loc     *time.Location
		y       int
		m       time.Month
		d       int
		want    string
		wantUTC string
	}{
		{ny, 2026, 3, 8, "2026-03-08 00:00:00 -0500 EST", "2026-03-08 05:00"},
		{ny, 2026, 1, 32, "2026-02-01 00:00:00 -0500 EST", "2026-02-01 05:00"},
		// Santiago's clocks go from 00:00 to 01:00 on 2025-09-07.
		{santiago, 2025, 9, 7, "2025-09-07 01:00:00 -0300 -03", "2025-09-07 04:00"},
		{santiago, 2025, 9, 6, "2025-09-06 00:00:00 -0400 -04", "2025-09-06 04:00"},
		{time.UTC, 2026, 12, 1, "2026-12-01 00:00:00 +0000 UTC", "2026-12-01 00:00"},
	}
	for _, tt := range tests {
		got := store.DayStart(tt.y, tt.m, tt.d, tt.loc)
		if got.String() != tt.want || got.UTC().Format("2006-01-02 15:04") != tt.wantUTC {
			t.Errorf("DayStart(%d-%d-%d, %s) = %s; want %s", tt.y, tt.m, tt.d, tt.loc, got, tt.want)
		}
		if got.Unix()%store.BucketSeconds != 0 {
			t.Errorf("DayStart(%d-%d-%d, %s) = %s: not a bucket's start", tt.y, tt.m, tt.d, tt.loc, got)
		}
	}
	sep7 := store.DayStart(2025, 9, 7, santiago)
	if got := store.LastDay(store.AddDays(sep7, 1, santiago), santiago); got != "2025-09-07" {
		t.Errorf("the last day of a range ending at Sep 8's start = %s; want 2025-09-07", got)
	}
	if got := store.AddDays(time.Date(2025, 9, 6, 23, 30, 0, 0, santiago), 1, santiago); !got.Equal(sep7) {
		t.Errorf("a day after Sep 6 23:30 = %s; want %s", got, sep7)
	}
}

// event_counts counts an event by the state people read (migration 0036):
// one Meta refused is failed, one our check held back is held back, one a
// decision cancelled is not sent; each moves when its state does (a retry,
// a held-back event that Meta then refuses), and the counts stay equal to
// their definition throughout.
func TestEventCountsByState(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeLive)
		now := time.Now().UTC().Truncate(time.Second)
		var evs []models.Event
		var leads []models.Lead
		for i := range 4 {
			l := storedLead(t, s, a, now, fmt.Sprintf("l%d@example.com", i))
			leads = append(leads, l)
			evs = append(evs, dueEvent(d, l, fmt.Sprintf("e%d", i), now, now))
		}
		stored := enqueue(t, s, evs...)
		states := func(when string, want map[models.EventStatus]int64) {
			t.Helper()
			noDrift(t, s, when)
			c, err := s.Counts(ctx, []store.Span{{AccountID: a.ID, From: now.Add(-24 * time.Hour), To: now.Add(24 * time.Hour)}}, store.CountFilter{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[models.EventStatus]int64{}
			for _, e := range c.Events {
				if e.N != 0 {
					got[e.Status] += e.N
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: events by state = %v; want %v", when, got, want)
			}
		}
		states("queued", map[models.EventStatus]int64{models.EventQueued: 4})

		c, err := s.ClaimEvents(ctx, d.ID, now, time.Minute, 10, nil)
		if err != nil || len(c.Events) != 4 {
			t.Fatalf("claim = %d, %v; want 4", len(c.Events), err)
		}
		err = s.SettleEvents(ctx, c, nil, "", now, []store.Outcome{
			{ID: stored[0].ID, Status: models.EventFailed, Error: models.ReasonMetaRefused + "(#100) Invalid parameter"},
			{ID: stored[1].ID, Status: models.EventFailed, Error: models.ReasonNotSent + "user_data.client_user_agent: required", Payload: `{}`},
			{ID: stored[2].ID, Status: models.EventFailed, Error: models.ReasonJunkLead},
			{ID: stored[3].ID, Status: models.EventQueued, Error: "paused", NextAttemptAt: now, Untried: true},
		})
		if err != nil {
			t.Fatal(err)
		}
		states("settled", map[models.EventStatus]int64{models.EventFailed: 1, models.EventHeldBack: 1,
			models.EventNotSent: 1, models.EventQueued: 1})

		// A person marks the last lead junk: its queued event is cancelled.
		read, err := s.ReadStages(ctx, a.ID, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		l := leads[3]
		after := l
		after.Junk, after.JunkOverride = true, models.StageJunk
		if _, err := s.ChangeLeads(ctx, a.ID, map[int64]time.Time{l.ID: l.UpdatedAt}, []store.LeadChange{{
			Change: &models.StageChange{ID: read.ChangeIDs[0], AccountID: a.ID, LeadID: l.ID, Stage: models.StageJunk, OccurredAt: now},
			After:  &after,
			Events: store.EventChanges{Cancel: []store.EventCancel{{ID: stored[3].ID, Reason: models.ReasonJunkLead}}},
		}}); err != nil {
			t.Fatal(err)
		}
		states("cancelled", map[models.EventStatus]int64{models.EventFailed: 1, models.EventHeldBack: 1, models.EventNotSent: 2})

		// The held-back event is retried, and Meta refuses it.
		if n, err := s.RetryEvents(ctx, a.ID, []int64{stored[1].ID}, now); err != nil || n != 1 {
			t.Fatalf("retry = %d, %v", n, err)
		}
		states("retried", map[models.EventStatus]int64{models.EventFailed: 1, models.EventQueued: 1, models.EventNotSent: 2})
		c, err = s.ClaimEvents(ctx, d.ID, now.Add(time.Second), time.Minute, 10, nil)
		if err != nil || len(c.Events) != 1 {
			t.Fatalf("claim = %d, %v; want 1", len(c.Events), err)
		}
		if err := s.SettleEvents(ctx, c, nil, "", now, []store.Outcome{{ID: stored[1].ID, Status: models.EventFailed,
			Error: models.ReasonNotSent + "event_source_url: required"}}); err != nil {
			t.Fatal(err)
		}
		states("held back again", map[models.EventStatus]int64{models.EventFailed: 1, models.EventHeldBack: 1, models.EventNotSent: 2})
		if err := s.CompactCounts(ctx); err != nil {
			t.Fatal(err)
		}
		states("merged", map[models.EventStatus]int64{models.EventFailed: 1, models.EventHeldBack: 1, models.EventNotSent: 2})
	})
}

// The databases' event_state (migration 0036) is models.Event.State.
func TestEventStateSQL(t *testing.T) {
	t.Parallel()
	reasons := []string{"", "Meta refused: (#100) Invalid parameter", models.ReasonNotSent + "event_source_url: required",
		models.ReasonJunkLead, models.ReasonNoLonger + "Qualified: condition 1 did not match", models.ReasonLeadGone, models.ReasonTestLead,
		"not sent", "NOT SENT: x", "HTTP 500"}
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		for _, status := range []models.EventStatus{models.EventQueued, models.EventFailed, models.EventExpired, models.EventDryRun} {
			for _, reason := range reasons {
				want := models.Event{Status: status, LastError: reason}.State()
				got, err := s.EventStateSQL(t.Context(), status, reason)
				if err != nil || got != want {
					t.Errorf("event_state(%s, %q) = %s, %v; want %s", status, reason, got, err, want)
				}
			}
		}
	})
}

// The databases' count_bucket and whole_seconds are Bucket and Unix time,
// to the second, on either side of a bucket's start.
func TestCountBucketSQL(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		start := time.Date(2026, 11, 25, 15, 15, 0, 0, time.UTC)
		for _, at := range []time.Time{start, start.Add(-time.Millisecond), start.Add(-time.Second), start.Add(899 * time.Second),
			start.Add(900 * time.Second), time.Unix(0, 0).UTC(), time.Date(2030, 3, 31, 1, 59, 59, 999000000, time.UTC)} {
			b, sec, err := s.CountBucketSQL(t.Context(), at)
			if err != nil || b != store.Bucket(at) || sec != at.Unix() {
				t.Errorf("count_bucket, whole_seconds(%s) = %d, %d, %v; want %d, %d", at, b, sec, err, store.Bucket(at), at.Unix())
			}
		}
	})
}

// TestEventCountsByDestination: a lead's events for two destinations are
// counted apart, through sending, a lead that moves and the merge.
func TestEventCountsByDestination(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		meta := newDataset(t, s, a, models.ModeLive)
		tt := models.Dataset{AccountID: a.ID, Kind: models.KindTikTok, Name: "TikTok", PixelID: "C4TIKTOK1", EventSource: "web",
			Mode: models.ModeLive, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &tt); err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC().Truncate(time.Second)
		var evs []models.Event
		for i := range 3 {
			l := storedLead(t, s, a, now, fmt.Sprintf("l%d@example.com", i))
			evs = append(evs, dueEvent(meta, l, fmt.Sprintf("m%d", i), now, now))
			if i < 2 {
				evs = append(evs, dueEvent(tt, l, fmt.Sprintf("t%d", i), now, now))
			}
		}
		enqueue(t, s, evs...)
		byDestination := func(when string, want map[int64]map[models.EventStatus]int64) {
			t.Helper()
			noDrift(t, s, when)
			c, err := s.Counts(ctx, []store.Span{{AccountID: a.ID, From: now.Add(-24 * time.Hour), To: now.Add(24 * time.Hour)}}, store.CountFilter{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[int64]map[models.EventStatus]int64{}
			for _, e := range c.Events {
				if e.N == 0 {
					continue
				}
				if got[e.DatasetID] == nil {
					got[e.DatasetID] = map[models.EventStatus]int64{}
				}
				got[e.DatasetID][e.Status] += e.N
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: events by destination = %v; want %v", when, got, want)
			}
		}
		byDestination("queued", map[int64]map[models.EventStatus]int64{meta.ID: {models.EventQueued: 3}, tt.ID: {models.EventQueued: 2}})
		c, err := s.ClaimEvents(ctx, tt.ID, now, time.Minute, 10, nil)
		if err != nil || len(c.Events) != 2 {
			t.Fatalf("claim = %d, %v; want TikTok's 2", len(c.Events), err)
		}
		outs := []store.Outcome{{ID: c.Events[0].ID, Status: models.EventSent}, {ID: c.Events[1].ID, Status: models.EventFailed, Error: "TikTok refused: 40002"}}
		if err := s.SettleEvents(ctx, c, nil, "", now, outs); err != nil {
			t.Fatal(err)
		}
		want := map[int64]map[models.EventStatus]int64{meta.ID: {models.EventQueued: 3}, tt.ID: {models.EventSent: 1, models.EventFailed: 1}}
		byDestination("TikTok settled", want)
		if err := s.CompactCounts(ctx); err != nil {
			t.Fatal(err)
		}
		byDestination("merged", want)
	})
}

// BySpan keeps each span's rows in their order, whatever the order of
// the spans, leaves out rows of no span, and lets a span's rows grow
// without writing over the next span's.
func TestCountsSplitBySpan(t *testing.T) {
	t.Parallel()
	c := store.Counts{
		Leads:  []store.LeadCount{{Span: 2, N: 1}, {Span: 0, N: 2}, {Span: 2, N: 3}, {Span: -1, N: 4}, {Span: 5, N: 5}, {Span: 0, N: 6}},
		Events: []store.EventCount{{Span: 1, N: 7}},
	}
	got := c.BySpan(3)
	if len(got) != 3 {
		t.Fatalf("BySpan(3) = %d spans", len(got))
	}
	ns := func(rows []store.LeadCount) (out []int64) {
		for _, r := range rows {
			out = append(out, r.N)
		}
		return out
	}
	for i, want := range [][]int64{{2, 6}, nil, {1, 3}} {
		if !slices.Equal(ns(got[i].Leads), want) {
			t.Errorf("span %d's leads = %v; want %v", i, ns(got[i].Leads), want)
		}
	}
	if len(got[1].Events) != 1 || got[1].Events[0].N != 7 || got[0].Events != nil || got[1].Stages != nil {
		t.Errorf("events by span = %+v", got)
	}
	got[0].Leads = append(got[0].Leads, store.LeadCount{N: 99})
	if !slices.Equal(ns(got[2].Leads), []int64{1, 3}) {
		t.Errorf("appending to span 0 changed span 2: %v", ns(got[2].Leads))
	}
}
