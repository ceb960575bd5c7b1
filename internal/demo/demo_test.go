package demo_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/demo"
	"github.com/leadsignal/leadsignal/internal/password"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// planLeads is how many leads the fixed seed plans for the four weeks up
// to fixedNow.
const planLeads = 782

// fixedNow is a Wednesday afternoon in Chicago.
var fixedNow = time.Date(2026, 3, 11, 20, 0, 0, 0, time.UTC)

func TestPlanIsFixed(t *testing.T) {
	t.Parallel()
	plan := demo.Plan(fixedNow)
	if len(plan) != planLeads {
		t.Errorf("len(Plan(%v)) = %d; want %d, the fixed seed's", fixedNow, len(plan), planLeads)
	}
	again := demo.Plan(fixedNow)
	for i := range plan {
		if plan[i].Request.Email != again[i].Request.Email || !plan[i].At.Equal(again[i].At) {
			t.Fatalf("Plan(%v) lead %d differs between two calls", fixedNow, i)
		}
	}
	var partial, repeats, won, instant, campaigns int
	from := fixedNow.AddDate(0, 0, -demo.Days)
	for i, p := range plan {
		if p.At.Before(from) || p.At.After(fixedNow) {
			t.Errorf("lead %d at %v; want within the %d days up to %v", i, p.At, demo.Days, fixedNow)
		}
		last := p.At
		for _, c := range p.Changes {
			if !c.At.After(last) || c.At.After(fixedNow) {
				t.Errorf("lead %d (%v): %s at %v; want after %v and not after now", i, p.At, c.Stage, c.At, last)
			}
			last = c.At
			if c.Stage == models.StageWon {
				won++
				if c.Value == nil || *c.Value <= 0 {
					t.Errorf("lead %d won without a value", i)
				}
			}
		}
		switch {
		case p.Request.Partial:
			partial++
		case p.Repeat:
			repeats++
		}
		if p.Request.Source == string(models.SourceInstantForm) {
			instant++
		}
		if strings.Contains(p.Request.EventSourceURL, "utm_campaign=") {
			campaigns++
		}
	}
	t.Logf("%d leads: %d partial, %d repeats, %d won, %d instant form, %d from campaigns", len(plan), partial, repeats, won, instant, campaigns)
	if partial == 0 || repeats == 0 || won == 0 || instant == 0 || campaigns == 0 {
		t.Errorf("plan has %d partial, %d repeats, %d won, %d instant form and %d campaign leads; want some of each",
			partial, repeats, won, instant, campaigns)
	}
}

// TestSeed seeds the demo into a fresh store and checks what the product
// made of it.
func TestSeed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		now := time.Now()
		var last, total int
		d, err := demo.Seed(ctx, s, demo.Options{Now: now, Rand: rand.New(rand.NewPCG(1, 2)),
			Progress: func(done, n int) { last, total = done, n }})
		if err != nil {
			t.Fatalf("Seed: %v", err)
		}
		plan := demo.Plan(now)
		if !d.Seeded || d.Leads != len(plan) || last != total || total != len(plan) {
			t.Errorf("Seed = seeded %v, %d leads, progress %d/%d; want seeded, %d leads, progress to the end",
				d.Seeded, d.Leads, last, total, len(plan))
		}
		if n := len(plan); n < 20*demo.Days || n > 40*demo.Days {
			t.Errorf("Plan(now) has %d leads; want 20 to 40 a day for %d days", n, demo.Days)
		}

		acc, err := s.AccountBySlug(ctx, demo.Slug)
		if err != nil {
			t.Fatalf("AccountBySlug(%s): %v", demo.Slug, err)
		}
		ds, err := s.Datasets(ctx, acc.ID)
		if err != nil || len(ds) != 3 {
			t.Fatalf("Datasets = %v, %v; want Meta's, TikTok's and Google's", ds, err)
		}
		kinds := map[models.Kind]models.Dataset{}
		for _, d := range ds {
			if d.Mode != models.ModeDryRun {
				t.Errorf("destination %s is %s; want dry run", d.Name, d.Mode)
			}
			kinds[d.Of()] = d
		}
		if len(kinds) != 3 || kinds[models.KindTikTok].ID == 0 || kinds[models.KindGoogle].ID == 0 {
			t.Errorf("destinations' kinds = %v; want meta, tiktok and google", kinds)
		}
		if keys, err := s.IngestKeys(ctx, acc.ID); err != nil || len(keys) != 1 {
			t.Errorf("IngestKeys = %d, %v; want one, as a set-up account has", len(keys), err)
		}
		rs, err := s.SendRules(ctx, acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		modes := map[string][]string{}
		for _, r := range rs {
			modes[r.Mode] = append(modes[r.Mode], r.EventName+"@"+r.Stage)
		}
		want := map[string]string{
			string(rule.AutomaticCompleted): "Lead@ Lead@ Lead@", string(rule.AutomaticMatch): "Contact@",
			string(rule.AutomaticPartial): "PartialLead@",
			string(rule.Stage):            "QualifiedLead@qualified Schedule@booked Purchase@won",
		}
		for mode, events := range want {
			if got := strings.Join(modes[mode], " "); got != events {
				t.Errorf("rules of mode %s send %q; want %q", mode, got, events)
			}
		}

		count := func(f store.LeadFilter) int64 {
			t.Helper()
			n, err := s.CountLeads(ctx, acc.ID, f, 100000)
			if err != nil {
				t.Fatalf("CountLeads(%+v): %v", f, err)
			}
			return n
		}
		if n := count(store.LeadFilter{From: now.AddDate(0, 0, -demo.Days)}); n != int64(len(plan)) {
			t.Errorf("leads of the last %d days = %d; want the plan's %d", demo.Days, n, len(plan))
		}
		junk, partial := count(store.LeadFilter{Junk: "junk"}), count(store.LeadFilter{Partial: "yes"})
		if junk < int64(len(plan))/20 || partial == 0 {
			t.Errorf("%d junk and %d partial leads of %d; want some of each", junk, partial, len(plan))
		}
		won, err := s.Leads(ctx, acc.ID, store.LeadFilter{Stage: models.StageWon}, nil, 1000)
		if err != nil || len(won) == 0 {
			t.Fatalf("won leads = %d, %v; want some", len(won), err)
		}
		purchases := 0
		for _, l := range won {
			evs, err := s.LeadEvents(ctx, acc.ID, l.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				if e.EventName == "Purchase" && e.Value != nil && *e.Value > 0 && e.Currency == "USD" {
					purchases++
				}
			}
		}
		if purchases != len(won) {
			t.Errorf("%d won leads have %d Purchase events with a USD value; want one each", len(won), purchases)
		}

		if d.Login.Email != demo.Email || d.Login.Password == "" {
			t.Errorf("Login = %+v; want %s with a password", d.Login, demo.Email)
		}
		u, err := s.UserByEmail(ctx, demo.Email)
		if err != nil || !password.Check(u.PasswordHash, d.Login.Password) || !u.IsAdmin {
			t.Errorf("demo user = %+v, %v; want the login's password, an admin (the first user)", u, err)
		}

		// Again: nothing new, a new password.
		again, err := demo.Seed(ctx, s, demo.Options{Now: now})
		if err != nil {
			t.Fatalf("second Seed: %v", err)
		}
		if again.Seeded || again.Account.ID != acc.ID || again.Login.Password == d.Login.Password {
			t.Errorf("second Seed = seeded %v, account %d, same password %v; want not seeded, account %d, a new password",
				again.Seeded, again.Account.ID, again.Login.Password == d.Login.Password, acc.ID)
		}
		if n := count(store.LeadFilter{}); n != int64(len(plan)) {
			t.Errorf("leads after a second Seed = %d; want still %d", n, len(plan))
		}
		u, _ = s.UserByEmail(ctx, demo.Email)
		if !password.Check(u.PasswordHash, again.Login.Password) {
			t.Errorf("the second login's password does not sign in")
		}

		// One tick: a new lead, a stage moved.
		tick, err := again.Tick(ctx, time.Now())
		if err != nil {
			t.Fatalf("Tick: %v", err)
		}
		if tick.Lead.ID == 0 || len(tick.Moved) == 0 {
			t.Errorf("Tick = lead %d, %d stage changes; want a new lead and a stage change", tick.Lead.ID, len(tick.Moved))
		}
		if n := count(store.LeadFilter{}); n != int64(len(plan))+1 {
			t.Errorf("leads after a tick = %d; want %d", n, len(plan)+1)
		}
		for _, c := range tick.Moved {
			l, err := s.Lead(ctx, acc.ID, c.LeadID)
			if err != nil || l.Stage != c.Stage {
				t.Errorf("lead %d after the tick's %s = stage %q, %v; want %s", c.LeadID, c.Stage, l.Stage, err, c.Stage)
			}
		}
	})
}

// TestDemoKeyLastUsed: the demo's leads come with its key, whose "Last
// used" follows its ticks as a website's key follows its posts, written at
// most once a minute; a revoked key is never noted.
func TestDemoKeyLastUsed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		seeded := time.Now().Truncate(time.Second)
		d, err := demo.Seed(ctx, s, demo.Options{Now: seeded, Rand: rand.New(rand.NewPCG(3, 4))})
		if err != nil {
			t.Fatalf("Seed: %v", err)
		}
		lastUsed := func() *time.Time {
			t.Helper()
			keys, err := s.IngestKeys(ctx, d.Account.ID)
			if err != nil || len(keys) != 1 {
				t.Fatalf("IngestKeys = %d, %v; want the demo's one", len(keys), err)
			}
			return keys[0].LastUsedAt
		}
		wantUsed := func(when string, at time.Time) {
			t.Helper()
			if got := lastUsed(); got == nil || !got.Equal(at) {
				t.Errorf("%s: key last used %v; want %v", when, got, at)
			}
		}
		wantUsed("after Seed", seeded)

		again, err := demo.Seed(ctx, s, demo.Options{Now: seeded})
		if err != nil {
			t.Fatalf("second Seed: %v", err)
		}
		for _, tt := range []struct {
			after, used time.Duration
		}{
			{30 * time.Second, 0},                           // within the minute: not written again
			{61 * time.Second, 61 * time.Second},            // past it: written
			{61*time.Second + demo.Every, 61 * time.Second}, // the next tick
		} {
			if _, err := again.Tick(ctx, seeded.Add(tt.after)); err != nil {
				t.Fatalf("Tick: %v", err)
			}
			wantUsed("a tick "+tt.after.String()+" after the seed", seeded.Add(tt.used))
		}

		keys, _ := s.IngestKeys(ctx, d.Account.ID)
		if err := s.RevokeIngestKey(ctx, d.Account.ID, keys[0].ID, seeded.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		revoked, err := demo.Seed(ctx, s, demo.Options{Now: seeded})
		if err != nil {
			t.Fatalf("Seed after the key was revoked: %v", err)
		}
		if _, err := revoked.Tick(ctx, seeded.Add(5*time.Minute)); err != nil {
			t.Fatalf("Tick: %v", err)
		}
		wantUsed("a tick after the key was revoked", seeded.Add(61*time.Second))
	})
}

func TestBar(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		tty  bool
		want []string // in order
	}{
		{"terminal", true, []string{"\rseeding demo leads [" + strings.Repeat(".", 30) + "] 0/40",
			"\rseeding demo leads [" + strings.Repeat("#", 15) + strings.Repeat(".", 15) + "] 20/40",
			"\rseeding demo leads [" + strings.Repeat("#", 30) + "] 40/40\n"}},
		{"pipe", false, []string{"seeding demo leads 0/40\n", "seeding demo leads 4/40\n", "seeding demo leads 40/40\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			bar := demo.NewBar(&b, tt.tty)
			for i := 0; i <= 40; i++ {
				bar.Update(i, 40)
			}
			out := b.String()
			for _, w := range tt.want {
				i := strings.Index(out, w)
				if i < 0 {
					t.Fatalf("bar wrote %q; want %q in it, after the lines before", b.String(), w)
				}
				out = out[i+len(w):]
			}
			if !tt.tty && strings.Count(b.String(), "\n") != 11 {
				t.Errorf("bar wrote %d lines to a pipe; want 11, one per tenth", strings.Count(b.String(), "\n"))
			}
		})
	}
}

// The demo's deals reach their stages over its four weeks, by when they
// reached them, on every day of the last week (so the Overview's "Stage
// updates arrive daily" passes), and a running demo keeps moving them:
// each tick's changes count today. The counts follow every write.
func TestDemoStagesSpreadAndKeepMoving(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		now := time.Now()
		d, err := demo.Seed(ctx, s, demo.Options{Now: now, Rand: rand.New(rand.NewPCG(3, 4))})
		if err != nil {
			t.Fatal(err)
		}
		loc, err := time.LoadLocation(demo.Timezone)
		if err != nil {
			t.Fatal(err)
		}
		tomorrow := store.AddDays(now, 1, loc)
		var spans []store.Span
		for i := demo.Days; i >= 1; i-- {
			spans = append(spans, store.Span{AccountID: d.Account.ID, From: store.AddDays(tomorrow, -i-1, loc),
				To: store.AddDays(tomorrow, -i, loc), Loc: loc})
		}
		today := store.Span{AccountID: d.Account.ID, From: store.AddDays(tomorrow, -1, loc), To: tomorrow, Loc: loc}
		reached := func(spans []store.Span) []int64 {
			t.Helper()
			c, err := s.Counts(ctx, spans, store.CountFilter{NoDelays: true})
			if err != nil {
				t.Fatal(err)
			}
			out := make([]int64, len(spans))
			for _, r := range c.Stages {
				out[r.Span] += r.N
			}
			return out
		}
		byDay := reached(spans)
		for w := range 4 {
			var n int64
			for _, v := range byDay[w*7 : w*7+7] {
				n += v
			}
			if n == 0 {
				t.Errorf("week %d of the demo's four: no stage reached; want some (by day %v)", w+1, byDay)
			}
		}
		for i, v := range byDay[len(byDay)-7:] {
			if v == 0 {
				t.Errorf("day %d of the last 7 full days: no stage reached; want some every day", i+1)
			}
		}
		before := reached([]store.Span{today})[0]
		tick, err := d.Tick(ctx, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if got := reached([]store.Span{today})[0]; got != before+int64(len(tick.Moved)) || len(tick.Moved) == 0 {
			t.Errorf("stages reached today after a tick = %d; want %d and %d moved", got, before+int64(len(tick.Moved)), len(tick.Moved))
		}
		if drift, err := s.CountsDrift(ctx); err != nil || len(drift) > 0 {
			t.Errorf("counts drift after the demo: %v, %v", drift, err)
		}
	})
}
