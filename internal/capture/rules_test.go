package capture

import (
	"encoding/json"
	"errors"
	"github.com/leadsignal/leadsignal/internal/decide/decidetest"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// addRule stores a send rule of the account for dataset d.
func addRule(t *testing.T, s *store.Store, acc models.Account, d models.Dataset, r models.SendRule, conds ...rule.Condition) models.SendRule {
	t.Helper()
	if conds == nil {
		conds = []rule.Condition{}
	}
	b, _ := json.Marshal(conds)
	r.AccountID, r.DatasetID, r.Conditions = acc.ID, d.ID, string(b)
	if r.Combinator == "" {
		r.Combinator = "and"
	}
	if _, problems := rule.CompileRule(r, rule.Schema{Open: true}); len(problems) > 0 {
		t.Fatalf("rule %s does not compile: %v", r.Name, problems)
	}
	if err := s.CreateSendRule(t.Context(), &r, nil); err != nil {
		t.Fatal(err)
	}
	return r
}

// eventsByName maps a lead's stored events by name.
func eventsByName(t *testing.T, s *store.Store, accountID, leadID int64) map[string]models.Event {
	t.Helper()
	evs, err := s.LeadEvents(t.Context(), accountID, leadID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]models.Event{}
	for _, e := range evs {
		out[e.EventName] = e
	}
	return out
}

// Capture queues one event per enabled automatic rule a lead matches, under
// the rule's event name, with its value, currency, action_source and test
// code; junk and partial leads feed only the rules made for them.
func TestCaptureFollowsSendRules(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, d := setup(t, s)
		big := addRule(t, s, acc, d, models.SendRule{Name: "Big budgets", Mode: "automatic_match", EventName: "QualifiedLead",
			ValueField: "fields.budget", CurrencyField: "fields.currency", ActionSource: capi.ActionSystemGenerated, TestEventCode: "TEST77", Enabled: true},
			rule.Condition{Field: "fields.budget", MatchType: rule.GT, Pattern: "1000"},
			rule.Condition{Field: "email_domain", MatchType: rule.NotEquals, Pattern: "gmail.com"})
		addRule(t, s, acc, d, models.SendRule{Name: "Junk audience", Mode: "automatic_match", EventName: "JunkLead", Enabled: true},
			rule.Condition{Field: "junk", MatchType: rule.Equals, Pattern: "true"})
		fixed := 50.0
		addRule(t, s, acc, d, models.SendRule{Name: "Partials", Mode: "automatic_partial", EventName: "PartialLead", Value: &fixed, Currency: "EUR", Enabled: true})
		addRule(t, s, acc, d, models.SendRule{Name: "Off", Mode: "automatic_completed", EventName: "Contact", Enabled: false})
		c := New(s, nil, nil)

		withBudget := webLead("ann@acme.example")
		withBudget.Fields = map[string]any{"budget": "5000", "currency": "gbp"}
		r, err := c.Capture(ctx, acc, valid(t, withBudget))
		if err != nil {
			t.Fatal(err)
		}
		got := eventsByName(t, s, acc.ID, r.Lead.ID)
		if len(got) != 2 || got["Lead"].ID == 0 || got["QualifiedLead"].ID == 0 {
			t.Fatalf("events of a big-budget lead = %v; want Lead (default rule) and QualifiedLead", got)
		}
		q := got["QualifiedLead"]
		if q.Origin != models.OriginRule || q.OriginID == nil || *q.OriginID != big.ID || q.Value == nil || *q.Value != 5000 || q.Currency != "GBP" ||
			q.ActionSource != capi.ActionSystemGenerated || q.TestEventCode != "TEST77" || q.Status != models.EventQueued {
			t.Errorf("QualifiedLead = %+v; want the rule's, 5000 GBP, system_generated, TEST77, queued", q)
		}
		if want := capi.EventID(d.PixelID, "QualifiedLead", capi.RecordKey(r.Lead)); q.EventID != want {
			t.Errorf("event id %s; want %s", q.EventID, want)
		}
		var payload struct {
			ActionSource string         `json:"action_source"`
			CustomData   map[string]any `json:"custom_data"`
		}
		if err := json.Unmarshal([]byte(q.Payload), &payload); err != nil || payload.ActionSource != "system_generated" || payload.CustomData["value"] != 5000.0 {
			t.Errorf("prepared payload %s; want action_source system_generated and value 5000", q.Payload)
		}
		if len(r.Events) != 2 {
			t.Errorf("reply events = %+v; want both", r.Events)
		}

		small := webLead("bob@gmail.com")
		small.Fields = map[string]any{"budget": "lots"}
		r, err = c.Capture(ctx, acc, valid(t, small))
		if err != nil {
			t.Fatal(err)
		}
		if got := eventsByName(t, s, acc.ID, r.Lead.ID); len(got) != 1 || got["Lead"].ID == 0 {
			t.Errorf("events of a lead the conditions rule out = %v; want only Lead", got)
		}

		bot := webLead("bot@acme.example")
		bot.Honeypot = "x"
		r, err = c.Capture(ctx, acc, valid(t, bot))
		if err != nil {
			t.Fatal(err)
		}
		if got := eventsByName(t, s, acc.ID, r.Lead.ID); len(got) != 1 || got["JunkLead"].ID == 0 {
			t.Errorf("events of a junk lead = %v; want only JunkLead, from the rule that requires junk", got)
		}

		part := webLead("part@acme.example")
		part.Partial = true
		r, err = c.Capture(ctx, acc, valid(t, part))
		if err != nil {
			t.Fatal(err)
		}
		got = eventsByName(t, s, acc.ID, r.Lead.ID)
		if p := got["PartialLead"]; len(got) != 1 || p.Value == nil || *p.Value != 50 || p.Currency != "EUR" {
			t.Errorf("events of a partial lead = %v; want only PartialLead worth 50 EUR", got)
		}
	})
}

// Reaching the booked stage fires its stage mappings the lead matches (a
// booking rule's successors), once however often it is marked; marking a
// junk lead not junk queues what the automatic rules now say.
func TestMarkFiresRules(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, d := setup(t, s)
		addRule(t, s, acc, d, models.SendRule{Name: "Booked calls", Mode: "stage", Stage: models.StageBooked, EventName: "Schedule", Enabled: true})
		addRule(t, s, acc, d, models.SendRule{Name: "Booked in Germany", Mode: "stage", Stage: models.StageBooked, EventName: "BookedDE", Enabled: true},
			rule.Condition{Field: "country", MatchType: rule.Equals, Pattern: "DE"})
		c := New(s, nil, nil)
		r, err := c.Capture(ctx, acc, valid(t, webLead("cal@acme.example")))
		if err != nil {
			t.Fatal(err)
		}
		at := r.Lead.CreatedAt.UTC().Truncate(time.Second).Add(time.Second)
		for range 2 {
			if _, err := decidetest.Mark(ctx, s, models.StageChange{AccountID: acc.ID, LeadID: r.Lead.ID, Stage: models.StageBooked, OccurredAt: at}); err != nil {
				t.Fatal(err)
			}
		}
		got := eventsByName(t, s, acc.ID, r.Lead.ID)
		sch := got["Schedule"]
		if len(got) != 2 || sch.ID == 0 || !sch.EventTime.Equal(at) {
			t.Fatalf("events after booking twice = %v; want Lead and one Schedule at %v", got, at)
		}
		if want := capi.EventID(d.PixelID, "Schedule", capi.StageRecordKey(r.Lead, models.StageBooked, "")); sch.EventID != want {
			t.Errorf("Schedule id %s; want %s", sch.EventID, want)
		}

		bot := webLead("later@acme.example")
		bot.Honeypot = "x"
		r, err = c.Capture(ctx, acc, valid(t, bot))
		if err != nil {
			t.Fatal(err)
		}
		if got := eventsByName(t, s, acc.ID, r.Lead.ID); len(got) != 0 {
			t.Fatalf("a junk lead's events = %v; want none", got)
		}
		if _, err := decidetest.Mark(ctx, s, models.StageChange{AccountID: acc.ID, LeadID: r.Lead.ID, Stage: models.StageNotJunk, OccurredAt: at}); err != nil {
			t.Fatal(err)
		}
		if got := eventsByName(t, s, acc.ID, r.Lead.ID); len(got) != 1 || got["Lead"].ID == 0 {
			t.Errorf("events once marked not junk = %v; want Lead", got)
		}
	})
}

// A manual rule sends when a person asks, once per lead, and only for a
// lead that meets its conditions.
func TestSendManual(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, d := setup(t, s)
		m := addRule(t, s, acc, d, models.SendRule{Name: "Hand picked", Mode: "manual", EventName: "Contact", Enabled: true},
			rule.Condition{Field: "email", MatchType: rule.EndsWith, Pattern: "@acme.example"})
		auto := addRule(t, s, acc, d, models.SendRule{Name: "Auto", Mode: "automatic_completed", EventName: "SubmitApplication", Enabled: true})
		c := New(s, nil, nil)
		r, err := c.Capture(ctx, acc, valid(t, webLead("pick@acme.example")))
		if err != nil {
			t.Fatal(err)
		}
		if got := eventsByName(t, s, acc.ID, r.Lead.ID); got["Contact"].ID != 0 {
			t.Fatal("a manual rule sent on capture")
		}
		now := time.Now().UTC()
		if queued, err := decide.New(s, nil, nil).SendManual(ctx, acc.ID, r.Lead.ID, m.ID, now); err != nil || !queued {
			t.Fatalf("first click = %v, %v; want queued", queued, err)
		}
		if queued, err := decide.New(s, nil, nil).SendManual(ctx, acc.ID, r.Lead.ID, m.ID, now.Add(time.Minute)); err != nil || queued {
			t.Errorf("second click = %v, %v; want nothing queued twice", queued, err)
		}
		if _, err := decide.New(s, nil, nil).SendManual(ctx, acc.ID, r.Lead.ID, auto.ID, now); !errors.Is(err, decide.ErrNotManual) {
			t.Errorf("an automatic rule's button: %v; want ErrNotManual", err)
		}
		other, err := c.Capture(ctx, acc, valid(t, webLead("else@other.example")))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decide.New(s, nil, nil).SendManual(ctx, acc.ID, other.Lead.ID, m.ID, now); !errors.Is(err, decide.ErrNoMatch) {
			t.Errorf("a lead the conditions rule out: %v; want ErrNoMatch", err)
		}
		if _, err := decide.New(s, nil, nil).SendManual(ctx, acc.ID+1, r.Lead.ID, m.ID, now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account: %v; want ErrNotFound", err)
		}
	})
}

// Applying a rule to recent leads queues its events for the leads it
// matches, as capture would have; applying again queues nothing twice.
func TestApplyRule(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, d := setup(t, s)
		c := New(s, nil, nil)
		for _, email := range []string{"a@acme.example", "b@acme.example", "c@other.example"} {
			if _, err := c.Capture(ctx, acc, valid(t, webLead(email))); err != nil {
				t.Fatal(err)
			}
		}
		r := addRule(t, s, acc, d, models.SendRule{Name: "Acme", Mode: "automatic_match", EventName: "QualifiedLead", Enabled: true},
			rule.Condition{Field: "email_domain", MatchType: rule.Equals, Pattern: "acme.example"})
		since := time.Now().Add(-decide.RecentWindow)
		if n, err := decide.New(s, nil, nil).ApplyRule(ctx, acc.ID, r.ID, since, true); err != nil || n != (decide.Applied{Matched: 2, Events: 2}) {
			t.Fatalf("count before applying = %+v, %v; want 2 matched, none had", n, err)
		}
		if n, err := decide.New(s, nil, nil).ApplyRule(ctx, acc.ID, r.ID, since, false); err != nil || n != (decide.Applied{Matched: 2, Events: 2, Queued: 2}) {
			t.Fatalf("apply = %+v, %v; want 2 matched, 2 queued", n, err)
		}
		if n, err := decide.New(s, nil, nil).ApplyRule(ctx, acc.ID, r.ID, since, false); err != nil || n != (decide.Applied{Matched: 2, Events: 2, Had: 2}) {
			t.Errorf("apply again = %+v, %v; want 2 matched, 2 had, none queued", n, err)
		}
		if counts, err := s.EventCounts(ctx, acc.ID, store.EventFilter{EventName: "QualifiedLead"}, 100); err != nil || counts[models.EventQueued] != 2 {
			t.Errorf("QualifiedLead counts = %v, %v; want 2 queued", counts, err)
		}
	})
}

// A lead's events follow the lead: marking it junk cancels the events of
// the rules that do not require junk ("junk equals false" among them) and
// queues those of a rule that requires junk; marking it not junk queues
// the first again, with their ids, and cancels the second.
func TestMarkJunkDecidesAgain(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, d := setup(t, s)
		addRule(t, s, acc, d, models.SendRule{Name: "Clean", Mode: "automatic_match", EventName: "CleanLead", Enabled: true},
			rule.Condition{Field: "junk", MatchType: rule.Equals, Pattern: "false"})
		addRule(t, s, acc, d, models.SendRule{Name: "Not a vendor", Mode: "automatic_match", EventName: "NoPitch", Enabled: true},
			rule.Condition{Field: "junk_reason.vendor_pitch", MatchType: rule.Equals, Pattern: "false"})
		addRule(t, s, acc, d, models.SendRule{Name: "Junk audience", Mode: "automatic_match", EventName: "JunkLead", Enabled: true},
			rule.Condition{Field: "junk", MatchType: rule.Equals, Pattern: "true"})
		c := New(s, nil, nil)
		r, err := c.Capture(ctx, acc, valid(t, webLead("who@acme.example")))
		if err != nil {
			t.Fatal(err)
		}
		before := eventsByName(t, s, acc.ID, r.Lead.ID)
		if len(before) != 3 || before["JunkLead"].ID != 0 {
			t.Fatalf("events = %v; want Lead, CleanLead and NoPitch", before)
		}
		mark := func(stage string) map[string]models.Event {
			t.Helper()
			if _, err := decidetest.Mark(ctx, s, models.StageChange{AccountID: acc.ID, LeadID: r.Lead.ID, Stage: stage, OccurredAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
			return eventsByName(t, s, acc.ID, r.Lead.ID)
		}
		got := mark(models.StageJunk)
		for _, name := range []string{"Lead", "CleanLead", "NoPitch"} {
			if e := got[name]; e.Status != models.EventFailed || e.LastError != decide.JunkLead {
				t.Errorf("after marking junk: %s is %s (%q); want failed: %q", name, e.Status, e.LastError, decide.JunkLead)
			}
		}
		if e := got["JunkLead"]; e.Status != models.EventQueued {
			t.Errorf("after marking junk: JunkLead is %q; want queued for the junk audience", e.Status)
		}

		got = mark(models.StageNotJunk)
		for _, name := range []string{"Lead", "CleanLead", "NoPitch"} {
			if e := got[name]; e.Status != models.EventQueued || e.ID != before[name].ID || e.EventID != before[name].EventID {
				t.Errorf("after marking not junk: %s is %s, id %d; want queued again as %d", name, e.Status, e.ID, before[name].ID)
			}
		}
		if e := got["JunkLead"]; e.Status != models.EventFailed || !strings.HasPrefix(e.LastError, "not sent: no longer matches Junk audience: ") {
			t.Errorf("after marking not junk: JunkLead is %s (%q); want failed: no longer matches", e.Status, e.LastError)
		}
	})
}

// Two automatic rules of one dataset with the same event name make one
// event, owned by the first in order: the capture is stored, never failed.
func TestRulesSharingAnEvent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, d := setup(t, s)
		rules, err := s.SendRules(ctx, acc.ID)
		if err != nil || len(rules) != 1 {
			t.Fatalf("rules = %v, %v; want the dataset's default rule", rules, err)
		}
		addRule(t, s, acc, d, models.SendRule{Name: "Also Lead", Mode: "automatic_match", EventName: "Lead", Enabled: true},
			rule.Condition{Field: "email", MatchType: rule.NotEmpty})
		c := New(s, nil, nil)
		r, err := c.Capture(ctx, acc, valid(t, webLead("both@acme.example")))
		if err != nil {
			t.Fatalf("capture of a lead two rules send as Lead: %v", err)
		}
		evs, err := s.LeadEvents(ctx, acc.ID, r.Lead.ID)
		if err != nil || len(evs) != 1 || len(r.Events) != 1 {
			t.Fatalf("events = %v (reply %v), %v; want one", evs, r.Events, err)
		}
		if e := evs[0]; e.OriginID == nil || *e.OriginID != rules[0].ID || e.Status != models.EventQueued {
			t.Errorf("the event's rule = %v, status %s; want the first rule %d, queued", e.OriginID, e.Status, rules[0].ID)
		}
	})
}

// A rule on what a person changes later fires when it changes, and its
// unsent event is cancelled, with the reason, when it changes back.
func TestRuleOnStageFollowsTheLead(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, d := setup(t, s)
		addRule(t, s, acc, d, models.SendRule{Name: "Qualified", Mode: "automatic_match", EventName: "QualifiedLead", Enabled: true},
			rule.Condition{Field: "stage", MatchType: rule.Equals, Pattern: models.StageQualified})
		c := New(s, nil, nil)
		r, err := c.Capture(ctx, acc, valid(t, webLead("q@acme.example")))
		if err != nil {
			t.Fatal(err)
		}
		if got := eventsByName(t, s, acc.ID, r.Lead.ID); got["QualifiedLead"].ID != 0 {
			t.Fatal("QualifiedLead queued before the lead was qualified")
		}
		at := r.Lead.CreatedAt.UTC().Truncate(time.Second).Add(time.Second)
		if _, err := decidetest.Mark(ctx, s, models.StageChange{AccountID: acc.ID, LeadID: r.Lead.ID, Stage: models.StageQualified, OccurredAt: at}); err != nil {
			t.Fatal(err)
		}
		q := eventsByName(t, s, acc.ID, r.Lead.ID)["QualifiedLead"]
		if q.Status != models.EventQueued {
			t.Fatalf("QualifiedLead after qualifying = %q; want queued", q.Status)
		}
		if _, err := decidetest.Mark(ctx, s, models.StageChange{AccountID: acc.ID, LeadID: r.Lead.ID, Stage: models.StageBooked, OccurredAt: at.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		q = eventsByName(t, s, acc.ID, r.Lead.ID)["QualifiedLead"]
		if want := `not sent: no longer matches Qualified: the condition (CRM stage is "qualified") did not match`; q.Status != models.EventFailed || !strings.HasPrefix(q.LastError, "not sent: no longer matches Qualified: ") {
			t.Errorf("QualifiedLead once booked = %s (%q); want failed like %q", q.Status, q.LastError, want)
		}
	})
}

// Capture keeps the phone's country in its own column, which a rule on
// phone_country reads.
func TestCaptureKeepsPhoneCountry(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, d := setup(t, s)
		addRule(t, s, acc, d, models.SendRule{Name: "Germany", Mode: "automatic_match", EventName: "GermanLead", Enabled: true},
			rule.Condition{Field: "phone_country", MatchType: rule.Equals, Pattern: "DE"})
		c := New(s, nil, nil)
		de := webLead("de@acme.example")
		de.Phone = "+49 30 901820"
		r, err := c.Capture(ctx, acc, valid(t, de))
		if err != nil {
			t.Fatal(err)
		}
		if l, err := s.Lead(ctx, acc.ID, r.Lead.ID); err != nil || l.PhoneCountry != "DE" {
			t.Errorf("stored phone country = %q, %v; want DE", l.PhoneCountry, err)
		}
		if got := eventsByName(t, s, acc.ID, r.Lead.ID); got["GermanLead"].ID == 0 {
			t.Errorf("events = %v; want GermanLead", got)
		}
		us := webLead("us@acme.example")
		us.Phone = "+1 415 692 4281"
		r, err = c.Capture(ctx, acc, valid(t, us))
		if err != nil {
			t.Fatal(err)
		}
		if got := eventsByName(t, s, acc.ID, r.Lead.ID); got["GermanLead"].ID != 0 {
			t.Errorf("a US phone's events = %v; want no GermanLead", got)
		}
	})
}
