package decide

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
)

var (
	account = models.Account{ID: 1, Currency: "USD", DefaultCountry: "US"}
	main    = models.Dataset{ID: 10, AccountID: 1, Name: "Main", PixelID: "123456789012345", Mode: models.ModeLive}
)

func newRule(id int64, name, mode, event string, conds ...rule.Condition) models.SendRule {
	b, _ := json.Marshal(conds)
	if conds == nil {
		b = []byte("[]")
	}
	return models.SendRule{ID: id, AccountID: 1, DatasetID: main.ID, Name: name, Mode: mode, EventName: event,
		Combinator: "and", Conditions: string(b), Enabled: true, UpdatedAt: time.Unix(int64(id), 0)}
}

func testLead() models.Lead {
	return models.Lead{ID: 7, AccountID: 1, Source: models.SourceWebsite, Email: "jane@acme.example",
		ClientIP: "203.0.113.7", ClientUserAgent: "Mozilla/5.0", EventSourceURL: "https://acme.example/form",
		Fields: "{}", JunkReasons: "[]", CreatedAt: time.Now().Add(-time.Hour).UTC()}
}

// stored is the event rule r makes of l, as stored with status and reason.
func stored(id int64, r models.SendRule, l models.Lead, status models.EventStatus, reason string) models.Event {
	rid := r.ID
	return models.Event{ID: id, AccountID: 1, DatasetID: main.ID, LeadID: l.ID, Origin: models.OriginRule, OriginID: &rid,
		EventName: r.EventName, EventID: capi.EventID(main.PixelID, r.EventName, capi.RecordKey(l)), Status: status, LastError: reason}
}

func decideFor(rules []models.SendRule, l models.Lead, evs ...models.Event) Decision {
	var ms Matchers
	keys := normalize.Normalize(normalize.Input{Email: l.Email, ClientIP: l.ClientIP, UserAgent: l.ClientUserAgent, CapturedAt: l.CreatedAt})
	return ms.Decide(Input{Account: account, Datasets: []models.Dataset{main}, Rules: rules, Lead: l, Keys: keys, Events: evs})
}

func TestDecideOneEventPerID(t *testing.T) {
	first := newRule(1, "Default", "automatic_completed", "Lead")
	second := newRule(2, "Also Lead", "automatic_match", "Lead", rule.Condition{Field: "email", MatchType: rule.NotEmpty})
	d := decideFor([]models.SendRule{first, second}, testLead())
	if len(d.New) != 1 || *d.New[0].OriginID != first.ID {
		t.Fatalf("New = %+v; want one Lead event owned by rule 1", d.New)
	}
	if d.New[0].Status != models.EventQueued {
		t.Errorf("status %s (%s); want queued", d.New[0].Status, d.New[0].LastError)
	}
}

func TestDecideAgain(t *testing.T) {
	clean := newRule(1, "Clean", "automatic_match", "CleanLead", rule.Condition{Field: "junk", MatchType: rule.Equals, Pattern: "false"})
	junkAudience := newRule(2, "Junk audience", "automatic_match", "JunkLead", rule.Condition{Field: "junk", MatchType: rule.Equals, Pattern: "true"})
	partial := newRule(3, "Started", "automatic_partial", "StartedForm")
	manual := newRule(4, "By hand", "manual", "Contact")
	off := newRule(5, "Off", "automatic_match", "OffEvent", rule.Condition{Field: "email", MatchType: rule.IsEmpty})
	off.Enabled = false
	rules := []models.SendRule{clean, junkAudience, partial, manual, off}

	l := testLead()
	l.Junk = true
	d := decideFor(rules, l,
		stored(100, clean, l, models.EventQueued, ""),
		stored(101, partial, l, models.EventQueued, ""),
		stored(102, manual, l, models.EventQueued, ""),
		stored(103, off, l, models.EventQueued, ""),
		stored(104, junkAudience, l, models.EventSent, ""),
	)
	if len(d.New) != 0 {
		t.Errorf("New = %+v; want none: the junk audience's event is stored (sent)", d.New)
	}
	want := []Cancel{{ID: 100, Reason: JunkLead}, {ID: 101, Reason: JunkLead}}
	if len(d.Cancel) != 2 || d.Cancel[0] != want[0] || d.Cancel[1] != want[1] {
		t.Errorf("Cancel = %+v; want the clean and partial rules' events (100, 101), as junk, and not the manual or disabled rule's", d.Cancel)
	}

	l.Junk = false
	d = decideFor(rules, l, stored(100, clean, l, models.EventFailed, JunkLead), stored(104, junkAudience, l, models.EventQueued, ""),
		stored(105, clean, l, models.EventFailed, "not sent: user_data: missing"))
	if len(d.Requeue) != 1 || d.Requeue[0] != 100 {
		t.Errorf("Requeue = %v; want the cancelled clean event (100) only, not one Meta refused", d.Requeue)
	}
	if len(d.Cancel) != 1 || d.Cancel[0].ID != 104 || !strings.HasPrefix(d.Cancel[0].Reason, "not sent: no longer matches Junk audience: ") {
		t.Errorf("Cancel = %+v; want the junk audience's event, no longer matching", d.Cancel)
	}
	if !Cancelled(d.Cancel[0].Reason) || Cancelled("not sent: user_data: missing") {
		t.Error("Cancelled does not tell a decision's reasons from Meta's")
	}
	// A manual event the dispatcher held back while the lead was junk goes
	// once it is not; one Meta refused stays failed.
	d = decideFor(rules, l, stored(106, manual, l, models.EventFailed, JunkLead), stored(107, manual, l, models.EventFailed, "not sent: refused"))
	if len(d.Requeue) != 1 || d.Requeue[0] != 106 {
		t.Errorf("Requeue = %v; want the manual event held as junk (106)", d.Requeue)
	}
}

func TestHolds(t *testing.T) {
	plain := newRule(1, "Default", "automatic_completed", "Lead")
	junkAudience := newRule(2, "Junk audience", "automatic_match", "JunkLead", rule.Condition{Field: "junk", MatchType: rule.Equals, Pattern: "true"})
	manual := newRule(3, "By hand", "manual", "Contact")
	stage := newRule(4, "Qualified", "automatic_match", "QualifiedLead", rule.Condition{Field: "stage", MatchType: rule.Equals, Pattern: "qualified"})
	rules := []models.SendRule{plain, junkAudience, manual, stage}
	junk := testLead()
	junk.Junk = true
	test := testLead()
	test.Test = true
	junkTest := junk
	junkTest.Test = true
	var ms Matchers
	tests := []struct {
		name string
		l    models.Lead
		e    models.Event
		want string
	}{
		{"a clean lead's default event", testLead(), stored(1, plain, testLead(), models.EventQueued, ""), ""},
		{"a junk lead's default event", junk, stored(1, plain, junk, models.EventQueued, ""), JunkLead},
		{"a junk lead's manual event", junk, stored(1, manual, junk, models.EventQueued, ""), JunkLead},
		{"a junk audience's event", junk, stored(1, junkAudience, junk, models.EventQueued, ""), ""},
		{"a clean lead's manual event", testLead(), stored(1, manual, testLead(), models.EventQueued, ""), ""},
		{"a stage rule the lead left", testLead(), stored(1, stage, testLead(), models.EventQueued, ""),
			`not sent: no longer matches Qualified: condition 1 (CRM stage is "qualified") did not match`},
		{"a deleted rule's event, junk lead", junk, stored(1, newRule(99, "Gone", "automatic_completed", "Gone"), junk, models.EventQueued, ""), JunkLead},
		{"a test lead's default event", test, stored(1, plain, test, models.EventQueued, ""), models.ReasonTestLead},
		{"a test lead's manual event", test, stored(1, manual, test, models.EventQueued, ""), models.ReasonTestLead},
		{"a junk test lead's junk audience event", junkTest, stored(1, junkAudience, junkTest, models.EventQueued, ""), models.ReasonTestLead},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ms.Holds(rules, tt.l, tt.e); got != tt.want {
				t.Errorf("Holds = %q; want %q", got, tt.want)
			}
		})
	}
}

// A test lead's events are decided like any lead's, so the install page
// shows what a real lead would send, and each is not sent, without a
// payload; it is never sendable in a preview.
func TestDecideTestLead(t *testing.T) {
	plain := newRule(1, "Default", "automatic_completed", "Lead")
	l := testLead()
	l.Test = true
	d := decideFor([]models.SendRule{plain}, l)
	if len(d.New) != 1 || d.New[0].Status != models.EventFailed || d.New[0].LastError != models.ReasonTestLead ||
		d.New[0].Payload != "" || d.New[0].State() != models.EventNotSent {
		t.Fatalf("New = %+v; want the Lead event, not sent as a test lead's", d.New)
	}
	keys := normalize.Normalize(normalize.Input{Email: l.Email, ClientIP: l.ClientIP, UserAgent: l.ClientUserAgent, CapturedAt: l.CreatedAt})
	if Sendable(account, main, plain, l, keys, rule.NewLead(&l), time.Now()) {
		t.Error("a test lead is sendable in a preview")
	}
	l.Test = false
	if !Sendable(account, main, plain, l, keys, rule.NewLead(&l), time.Now()) {
		t.Error("the same lead, not a test, is not sendable")
	}
}

// A partial lead completed keeps its partial rule's event: completing a
// form is no reason to take back that it was started.
func TestDecideKeepsPartialEventsOnCompletion(t *testing.T) {
	partial := newRule(1, "Started", "automatic_partial", "StartedForm")
	completed := newRule(2, "Default", "automatic_completed", "Lead")
	l := testLead()
	d := decideFor([]models.SendRule{partial, completed}, l, stored(100, partial, l, models.EventQueued, ""))
	if len(d.Cancel) != 0 || len(d.New) != 1 || d.New[0].EventName != "Lead" {
		t.Errorf("decision = %+v; want the Lead event new and the StartedForm event kept", d)
	}
}

// A rule naming several destinations makes one event for each, under each
// destination's own event id, in the rule's order; a destination that is
// not among the account's is skipped, and one shared with an earlier rule
// making the same event is that rule's.
func TestDecideSeveralDestinations(t *testing.T) {
	tiktok := models.Dataset{ID: 11, AccountID: 1, Kind: models.KindTikTok, Name: "TikTok", PixelID: "C4TIKTOK1234", EventSource: "web",
		Mode: models.ModeLive}
	first := newRule(1, "Meta only", "automatic_completed", "Lead")
	both := newRule(2, "Everywhere", "automatic_completed", "Lead")
	both.SetDestinations([]int64{tiktok.ID, 999, main.ID})
	l := testLead()
	keys := normalize.Normalize(normalize.Input{Email: l.Email, ClientIP: l.ClientIP, UserAgent: l.ClientUserAgent, CapturedAt: l.CreatedAt})
	var ms Matchers
	d := ms.Decide(Input{Account: account, Datasets: []models.Dataset{main, tiktok}, Rules: []models.SendRule{first, both}, Lead: l, Keys: keys})
	if len(d.New) != 2 {
		t.Fatalf("New = %+v; want two Lead events", d.New)
	}
	byDataset := map[int64]models.Event{}
	for _, e := range d.New {
		byDataset[e.DatasetID] = e
	}
	if e := byDataset[main.ID]; *e.OriginID != first.ID || e.EventID != capi.EventID(main.PixelID, "Lead", capi.RecordKey(l)) {
		t.Errorf("Meta's event = rule %d, id %s; want rule 1's, under Meta's id", *e.OriginID, e.EventID)
	}
	e := byDataset[tiktok.ID]
	if *e.OriginID != both.ID || e.EventID != capi.EventID(tiktok.PixelID, "Lead", capi.RecordKey(l)) || e.Status != models.EventQueued {
		t.Errorf("TikTok's event = rule %d, id %s, %s (%s); want rule 2's, queued, under TikTok's id", *e.OriginID, e.EventID, e.Status, e.LastError)
	}
	if got := Destinations([]models.Dataset{main, tiktok}, both); len(got) != 2 || got[0].ID != main.ID || got[1].ID != tiktok.ID {
		t.Errorf("Destinations = %v; want Main then TikTok, by id", got)
	}

	// A rule's test event code is Meta's Test Events tool's alone.
	both.TestEventCode = "TEST123"
	view := rule.NewLead(&l)
	if e := Event(account, main, both, l, keys, view, capi.RecordKey(l), l.CreatedAt); e.TestEventCode != "TEST123" {
		t.Errorf("Meta's event has test code %q; want the rule's", e.TestEventCode)
	}
	if e := Event(account, tiktok, both, l, keys, view, capi.RecordKey(l), l.CreatedAt); e.TestEventCode != "" {
		t.Errorf("TikTok's event has test code %q; want none: TikTok's test mode is its destination's", e.TestEventCode)
	}
}
