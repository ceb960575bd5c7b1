//go:build browser

package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/capi/capitest"
	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestBrowserMetaOutageBanner: while Meta is unreachable every page of the
// account says so; "Try now" sends the backlog once Meta is back, and the
// banner goes.
func TestBrowserMetaOutageBanner(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	acc, key := a.ingestAccount("acme", "US")
	hb := a.browser()
	hb.login("acme-owner@example.com")
	connect(t, a, hb, acc, url.Values{"name": {"Main"}, "pixel_id": {"123456789012345"}, "access_token": {capitest.Token},
		"mode": {"live"}, "ldu": {"off"}})
	if r := a.postLead(key, goodLead); r.status != 201 {
		t.Fatalf("post lead = %d %s", r.status, r.raw)
	}
	down := dispatch.New(dispatch.Options{Store: a.store, Sender: &capi.Client{}, Box: a.box, Log: testLogger(),
		GraphURL: capitest.Unreachable(t), DefaultVersion: capitest.Version, Now: a.clock})
	if _, err := down.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}

	b := chrome(t)
	b.login(a.srv.URL, "acme-owner@example.com")
	b.do(
		chromedp.Navigate(a.srv.URL+"/accounts/"+itoa(acc.ID)+"/datasets"),
		visible(`[data-testid="account-alert"]`),
		visible(`[data-testid="dataset-held"]`),
		screenshot("outage-banner"),
	)
	if msg := b.text(`[data-testid="account-alert"]`); !strings.Contains(msg, "Meta unreachable for dataset Main") || !strings.Contains(msg, "1 event waiting") {
		t.Errorf("banner = %q", msg)
	}
	b.do(
		click(`[data-testid="alert-action"]`),
		visible(`[data-testid="flash"]`),
	)
	a.drain()
	if got := a.meta.EventsReceived(); got != 1 {
		t.Errorf("Meta received %d events after Try now; want 1", got)
	}
	b.do(
		chromedp.Navigate(a.srv.URL+"/accounts/"+itoa(acc.ID)+"/datasets"),
		visible(`[data-testid="datasets-table"]`),
	)
	if n := b.count(`[data-testid="account-alert"]`); n != 0 {
		t.Errorf("%d banners after Meta came back; want none", n)
	}
}
