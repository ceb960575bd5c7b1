package web_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/capi/capitest"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/web"
)

// "Sendable now" is decided as events are held back when queued: a
// website lead without its visitor's user agent matches, and is not
// sendable.
func TestRulePreviewSendable(t *testing.T) {
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
		if got := strings.Join(strings.Fields(r.text("preview-sendable")), " "); !strings.HasPrefix(got, "2 could be sent now. The others would be held back") {
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
