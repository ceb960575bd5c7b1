//go:build browser

package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/internal/capi/capitest"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestBrowserGettingStarted follows the Overview's steps as an owner: each
// link leads to where the step is done, each step is marked done once the
// account shows it, and the box is gone when all are; a viewer never sees it.
func TestBrowserGettingStarted(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		owner := a.user("ada@example.com", false)
		acc := a.account("acme", owner)
		viewer := a.user("vic@example.com", false)
		if err := s.SetMember(t.Context(), acc.ID, viewer.ID, models.RoleViewer); err != nil {
			t.Fatal(err)
		}
		home := a.srv.URL + "/accounts/" + itoa(acc.ID)
		b := chrome(t)
		b.login(a.srv.URL, "ada@example.com")

		b.do(
			chromedp.Navigate(home),
			visible(`[data-testid="getting-started"]`),
			shot("overview-getting-started"),
		)
		if n := b.count(`[data-testid="getting-started"] li[data-done="false"]`); n != 3 {
			t.Errorf("new account: %d steps to do; want 3", n)
		}
		if curl := b.text(`[data-testid="step-curl"]`); !strings.Contains(curl, a.srv.URL+"/api/v1/leads") {
			t.Errorf("curl line = %q; want this server's URL", curl)
		}

		// Step 1: the link opens Settings at the keys; a key is made there.
		b.do(
			click(`[data-testid="step-key"] a`),
			visible(`[data-testid="key-form"]`),
			typeInto(`#f-key_name`, "Website"),
			click(`[data-testid="key-form"] button[type="submit"]`),
			visible(`[data-testid="new-key-secret"]`),
		)
		secret := b.text(`[data-testid="new-key-secret"]`)
		// Step 2: the curl line's post, with that key.
		if r := a.postLead(secret, goodLead); r.status != 201 {
			t.Fatalf("post lead = %d %s", r.status, r.raw)
		}
		b.do(
			chromedp.Navigate(home),
			visible(`[data-testid="getting-started"]`),
			shot("overview-two-steps-done"),
		)
		for _, id := range []string{"step-key", "step-lead"} {
			if done := b.attr(`[data-testid="`+id+`"]`, "data-done"); done != "true" {
				t.Errorf("%s done = %q; want true", id, done)
			}
		}
		if b.count(`[data-testid="step-curl"]`) != 0 {
			t.Error("the curl line stays after the first lead")
		}

		// Step 3: the link opens the dataset form; once connected, the box
		// is gone and the counts remain.
		b.do(
			click(`[data-testid="step-dataset"] a`),
			visible(`[data-testid="dataset-form"]`),
			typeInto(`#f-name`, "Main pixel"),
			typeInto(`#f-pixel_id`, "123456789012345"),
			click(`[data-testid="dataset-form"] button[type="submit"]`),
			visible(`[data-testid="test-form"]`),
			chromedp.Navigate(home),
			visible(`[data-testid="headline"]`),
			shot("overview-all-done"),
		)
		if n := b.count(`[data-testid="getting-started"]`); n != 0 {
			t.Error("the getting-started box stays when every step is done")
		}
		if got := b.text(`[data-testid="count-leads-2"]`); got != "1" {
			t.Errorf("leads count = %q; want 1", got)
		}

		// A viewer sees the Overview, never the steps, even on an account
		// that has done none.
		fresh := a.account("fresh", owner)
		if err := s.SetMember(t.Context(), fresh.ID, viewer.ID, models.RoleViewer); err != nil {
			t.Fatal(err)
		}
		b.do(
			click(`[data-testid="user-menu"]`),
			click(`[data-testid="logout"]`),
			visible(`[data-testid="login-form"]`),
		)
		b.login(a.srv.URL, "vic@example.com")
		b.do(
			chromedp.Navigate(a.srv.URL+"/accounts/"+itoa(fresh.ID)),
			visible(`[data-testid="overview-empty"]`),
			shot("overview-viewer"),
		)
		if n := b.count(`[data-testid="getting-started"]`); n != 0 {
			t.Error("a viewer sees the getting-started steps")
		}
	})
}

// TestBrowserDryRunTestEvent clicks the test event button of a dry-run
// dataset: the page shows the event's JSON and says nothing was sent, and
// the fake Meta receives nothing.
func TestBrowserDryRunTestEvent(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, _ := a.ingestAccount("acme", "US")
		b := chrome(t)
		b.login(a.srv.URL, "acme-owner@example.com")
		b.do(
			chromedp.Navigate(a.srv.URL+"/accounts/"+itoa(acc.ID)+"/datasets/new"),
			visible(`[data-testid="dataset-form"]`),
			typeInto(`#f-name`, "Main pixel"),
			typeInto(`#f-pixel_id`, "123456789012345"),
			typeInto(`#f-access_token`, capitest.Token),
			setValue(`#f-mode`, "dry_run"),
			typeInto(`#f-test_event_code`, "TEST42"),
			click(`[data-testid="dataset-form"] button[type="submit"]`),
			visible(`[data-testid="test-form"]`),
			click(`[data-testid="test-form"] button`),
			visible(`[data-testid="test-payload"]`),
			shot("dataset-dry-run-test-event"),
		)
		if msg := b.text(`[data-testid="test-result"]`); !strings.Contains(msg, "nothing was sent") {
			t.Errorf("test event answer = %q; want it to say nothing was sent", msg)
		}
		if payload := b.text(`[data-testid="test-payload"]`); !strings.Contains(payload, `"event_name": "Lead"`) {
			t.Errorf("payload shown = %q; want the Lead event's JSON", payload)
		}
		if n := len(a.meta.Requests()); n != 0 {
			t.Errorf("Meta received %d requests from a dry-run dataset; want none", n)
		}
	})
}

// attr returns an attribute of the first element sel matches, "" when it
// has none.
func (b *tab) attr(sel, name string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.AttributeValue(chromedp.CSS(sel), name))
	if err != nil {
		b.t.Fatalf("browser: %s of %s: %v", name, sel, err)
	}
	return v.Value
}
