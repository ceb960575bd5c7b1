package web_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/capi/capitest"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
	"github.com/leadsignal/leadsignal/web"
)

// The preview counts what the rule's destination's platform would take:
// a Google Ads destination without a conversion action for the rule's
// event takes none, and the preview says so in Google's terms.
func TestRulePreviewSendableByPlatform(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		postRuleLeads(t, f)
		g := models.Dataset{AccountID: f.acc.ID, Kind: models.KindGoogle, Name: "Google", PixelID: "1234567890", Mode: models.ModeDryRun,
			LDU: models.LDUOff, EventNames: `{"Lead":"111111111"}`}
		if err := s.CreateDataset(t.Context(), &g); err != nil {
			t.Fatal(err)
		}
		r := f.b.postWith(f.url("/preview"), ruleValues("R", g, "automatic_match", "QualifiedLead", "and",
			[3]string{"city", "equals", "berlin"}), http.Header{"Hx-Request": {"true"}})
		wantStatus(t, "preview", r, http.StatusOK)
		got := strings.Join(strings.Fields(r.text("preview-sendable")), " ")
		if !strings.HasPrefix(got, "0 could be sent to Google (Google Ads) now.") || !strings.Contains(got, "as Google would refuse them") {
			t.Errorf("sendable: %q; want none, in Google's terms", got)
		}
		r = f.b.postWith(f.url("/preview"), ruleValues("R", g, "automatic_match", "Lead", "and",
			[3]string{"city", "equals", "berlin"}), http.Header{"Hx-Request": {"true"}})
		if got := strings.Join(strings.Fields(r.text("preview-sendable")), " "); !strings.HasPrefix(got, r.text("preview-matched")+" could be sent") {
			t.Errorf("sendable with a conversion action: %q; want every match (%s)", got, r.text("preview-matched"))
		}
	})
}

// "Sendable now" is decided as events are held back when queued: a
// website lead without its visitor's user agent matches, and is not
// sendable.
func TestRulePreviewSendable(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		postRuleLeads(t, f)
		noUA := ruleLead(7, "gus@acme-roofing.com", "Berlin", "9000", "2026-12-01T10:00:00Z", map[string]any{"client_user_agent": ""})
		if r := f.a.postLead(f.key, noUA); r.status != http.StatusCreated {
			t.Fatalf("lead without a user agent: %d %s", r.status, r.raw)
		}
		r := f.b.postWith(f.url("/preview"), ruleValues("R", f.d, "automatic_match", "QualifiedLead", "and",
			[3]string{"city", "equals", "berlin"}), http.Header{"Hx-Request": {"true"}})
		wantStatus(t, "preview", r, http.StatusOK)
		// ann, bob and gus match; gus's event would be held back.
		if r.text("preview-matched") != "3" {
			t.Errorf("preview %q; want 3 matches", r.text("preview-headline"))
		}
		if got := strings.Join(strings.Fields(r.text("preview-sendable")), " "); !strings.HasPrefix(got, "2 could be sent to Main now. The others would be held back with the reason, as Meta would refuse them") {
			t.Errorf("sendable: %q; want 2, and why the others are not", got)
		}
		if got := strings.Join(strings.Fields(r.text("preview-headline")), " "); !strings.HasSuffix(got, "leads of the last 7 days, as they are now.") {
			t.Errorf("headline %q; want it to say the leads are counted as they are now", got)
		}
	})
}

// costlyLeads posts n leads whose messages are 5,000 a's: a rule of
// (.*a){150}x conditions on the message reads 4 KB of each, slowly.
func costlyLeads(t *testing.T, f rulesFixture, n int) {
	t.Helper()
	for i := range n {
		body := ruleLead(100+i, fmt.Sprintf("slow%d@acme-roofing.com", i), "Berlin", "9000", "2026-11-30T10:00:00Z",
			map[string]any{"message": strings.Repeat("a", 5000)})
		if r := f.a.postLead(f.key, body); r.status != http.StatusCreated {
			t.Fatalf("lead %d: %d %s", i, r.status, r.raw)
		}
	}
}

func costlyRule(f rulesFixture) url.Values {
	costly := [3]string{"message", "regex", "(.*a){150}x"}
	return ruleValues("Costly", f.d, "automatic_match", "CostlyLead", "or", costly, costly, costly)
}

// A rule too costly to count over the week ends with the deadline's
// message instead of failing.
func TestRulePreviewDeadline(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		costlyLeads(t, f, 40)
		web.SetPreviewDeadline(t, 200*time.Millisecond)
		start := time.Now()
		r := f.b.postWith(f.url("/preview"), costlyRule(f), http.Header{"Hx-Request": {"true"}})
		took := time.Since(start)
		wantStatus(t, "costly preview", r, http.StatusOK)
		if got := r.text("preview-too-long"); !strings.HasPrefix(got, "The preview took too long: narrow the rule.") {
			t.Errorf("preview %q; want the deadline's message", r.body)
		}
		if r.has("preview-matched") {
			t.Error("a preview cut short shows counts")
		}
		if took > 5*time.Second {
			t.Errorf("the preview answered after %v; the deadline was 200ms", took)
		}
	})
}

// syncBuffer is a log destination that the server's goroutines and the
// test may share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A client that goes away mid-preview (a closed tab, or htmx replacing the
// request with a newer one) is no error: no 500, no ERROR in the log.
func TestRulePreviewClientGone(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		costlyLeads(t, f, 40)
		web.SetPreviewDeadline(t, time.Minute)
		// The app's server with a log the test reads; the browser's session
		// works on it (same keys, same database).
		var logs syncBuffer
		e := web.New(web.Options{Store: s, Log: slog.New(slog.NewTextHandler(&logs, nil)),
			SessionHashKey: bytes.Repeat([]byte{1}, 32), SessionBlockKey: bytes.Repeat([]byte{2}, 32),
			Now: f.a.clock, Box: f.a.box, Sender: &capi.Client{}, GraphURL: f.a.meta.URL, APIVersion: capitest.Version})
		v := costlyRule(f)
		v.Set("_csrf", f.b.csrf)
		ctx, cancel := context.WithCancel(t.Context())
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, f.url("/preview"), strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("HX-Request", "true")
		srvURL, _ := url.Parse(f.a.srv.URL)
		for _, c := range f.b.c.Jar.Cookies(srvURL) {
			req.AddCookie(c)
		}
		rec := httptest.NewRecorder()
		time.AfterFunc(300*time.Millisecond, cancel)
		start := time.Now()
		e.ServeHTTP(rec, req)
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("the preview ran %v after its client left", took)
		}
		if rec.Code == http.StatusInternalServerError || rec.Code < 400 {
			t.Errorf("a preview whose client left answers %d", rec.Code)
		}
		if strings.Contains(logs.String(), "level=ERROR") {
			t.Errorf("a client leaving is logged as an error:\n%s", logs.String())
		}
		if !strings.Contains(logs.String(), "status=499") {
			t.Errorf("the access log does not say the client left:\n%s", logs.String())
		}
	})
}

// The preview, apply and the evaluation of each lead agree on a seeded
// week of leads (junk, partial, one too old, one a person marked
// qualified): the preview's count of a rule is what apply queues, and the
// leads that each lead's evaluation (decide) gives the rule's event.
func TestRulePreviewApplyAgree(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		f := newRulesFixture(t, s)
		ids := postRuleLeads(t, f)
		// A person marks bob qualified: a rule on the stage counts him now.
		lp := views.AccountURL(f.acc.ID, "/leads/"+itoa(ids[1]))
		wantStatus(t, "mark qualified", f.b.post(lp+"/stages", url.Values{"stage": {"qualified"}}), http.StatusSeeOther)
		htmx := http.Header{"Hx-Request": {"true"}}
		for _, tt := range []struct {
			name   string
			values url.Values
			want   int
		}{
			{"conditions", ruleValues("Big Berlin", f.d, "automatic_match", "BigBerlin", "and",
				[3]string{"city", "equals", "berlin"}, [3]string{"fields.budget", "gt", "5000"}), 1},
			{"or", ruleValues("Paris or gmail", f.d, "automatic_match", "ParisOrGmail", "or",
				[3]string{"city", "equals", "paris"}, [3]string{"email_domain", "equals", "gmail.com"}), 2},
			{"requires junk", ruleValues("Junk audience", f.d, "automatic_match", "JunkLead", "and", [3]string{"junk", "equals", "true"}), 1},
			{"not junk: junk leads stay out", ruleValues("Clean", f.d, "automatic_match", "CleanLead", "and", [3]string{"junk", "equals", "false"}), 3},
			{"partial", ruleValues("Started", f.d, "automatic_partial", "PartialLead", "and"), 1},
			{"stage a person set", ruleValues("Qualified", f.d, "automatic_match", "QualifiedLead", "and", [3]string{"stage", "equals", "qualified"}), 1},
			// (Paris OR gmail) AND not junk: bob and cy; as one OR list
			// "Junk is false" would let ann in too.
			{"an or group beside junk", withGroup(ruleValues("Paris or gmail, clean", f.d, "automatic_match", "GroupedLead", "and",
				[3]string{"junk", "equals", "false"}), "k1", "or", [3]string{"city", "equals", "paris"}, [3]string{"email_domain", "equals", "gmail.com"}), 2},
			// Berlin OR (budget over 5000 AND a company address): ann, bob, cy.
			{"an and group in an or rule", withGroup(ruleValues("Berlin or big company", f.d, "automatic_match", "BerlinOrBig", "or",
				[3]string{"city", "equals", "berlin"}), "k2", "and", [3]string{"fields.budget", "gt", "5000"},
				[3]string{"email_domain", "equals", "acme-roofing.com"}), 3},
			// A group that requires junk lets the junk lead in: dee.
			{"a group requiring junk", withGroup(ruleValues("Junk in Berlin", f.d, "automatic_match", "JunkBerlin", "and",
				[3]string{"city", "equals", "berlin"}), "k3", "or", [3]string{"junk", "equals", "true"},
				[3]string{"junk_reason.honeypot", "equals", "true"}), 1},
		} {
			t.Run(tt.name, func(t *testing.T) {
				pr := f.b.postWith(f.url("/preview"), tt.values, htmx)
				wantStatus(t, "preview", pr, http.StatusOK)
				matched, _ := strconv.Atoi(pr.text("preview-matched"))
				if matched != tt.want {
					t.Errorf("preview matched %d; want %d (%s)", matched, tt.want, pr.text("preview-headline"))
				}
				r := createRuleForm(t, f, tt.values)

				// What each lead's evaluation would queue of this rule.
				rules, err := s.SendRules(ctx, f.acc.ID)
				if err != nil {
					t.Fatal(err)
				}
				acc, _ := s.Account(ctx, f.acc.ID)
				var ms decide.Matchers
				evaluated := 0
				for _, id := range ids {
					l, err := s.Lead(ctx, f.acc.ID, id)
					if err != nil {
						t.Fatal(err)
					}
					if f.a.clock().Sub(l.CreatedAt) > decide.RecentWindow {
						continue
					}
					keys, _ := normalize.ParseKeys([]byte(l.MatchKeys))
					d := ms.Decide(decide.Input{Account: acc, Datasets: []models.Dataset{f.d}, Rules: rules, Lead: l, Keys: keys})
					for _, e := range d.New {
						if e.OriginID != nil && *e.OriginID == r.ID {
							evaluated++
						}
					}
				}
				if evaluated != matched {
					t.Errorf("the leads' evaluation gives %d %s events; the preview matched %d", evaluated, r.EventName, matched)
				}

				// Apply's confirmation says so, then queues exactly that.
				path := f.url("/" + itoa(r.ID) + "/apply")
				ask := f.b.get(path + "?confirm=yes") // a GET only asks
				wantStatus(t, "apply confirmation", ask, http.StatusOK)
				wantMsg := fmt.Sprintf("this rule as they are now; 0 have the %s event already, so applying queues %s.", r.EventName,
					views.Plural(int64(matched), r.EventName+" event", r.EventName+" events"))
				if got := ask.text("confirm-message"); !strings.HasPrefix(got, views.Plural(int64(matched), "lead", "leads")+" of the last 7 days") ||
					!strings.Contains(got, wantMsg) {
					t.Errorf("confirmation %q; want %d leads and %q", got, matched, wantMsg)
				}
				if n := eventCount(t, s, f.acc.ID, r.EventName); n != 0 {
					t.Fatalf("%d events queued by asking", n)
				}
				wantStatus(t, "apply", f.b.post(path, url.Values{"confirm": {"yes"}}), http.StatusSeeOther)
				if n := eventCount(t, s, f.acc.ID, r.EventName); n != int64(matched) {
					t.Errorf("apply queued %d %s events; the preview matched %d", n, r.EventName, matched)
				}
				// Asked again, it says there is nothing to queue, and offers
				// no button.
				again := f.b.get(path)
				if got := again.text("confirm-message"); !strings.Contains(got, "There is nothing to queue.") || again.has("confirm") || !again.has("confirm-back") {
					t.Errorf("after applying, the confirmation says %q (button %v)", got, again.has("confirm"))
				}
			})
		}
	})
}

// withGroup adds a condition group to the form values v: its key, its
// combinator and its rows.
func withGroup(v url.Values, key, combinator string, conds ...[3]string) url.Values {
	v.Add("group_key", key)
	v.Add("group_combinator", combinator)
	for _, c := range conds {
		v.Add("cond_field", c[0])
		v.Add("cond_match_type", c[1])
		v.Add("cond_pattern", c[2])
		v.Add("cond_group", key)
	}
	return v
}

// eventCount is how many events of the account have this name.
func eventCount(t *testing.T, s *store.Store, accountID int64, name string) int64 {
	t.Helper()
	n, err := s.EventCounts(t.Context(), accountID, store.EventFilter{EventName: name}, 100)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, v := range n {
		sum += v
	}
	return sum
}
