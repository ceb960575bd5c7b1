//go:build browser

package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/internal/crm/crmtest"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// An owner adds a HubSpot connection from the Stages page, loads its
// stage ids from HubSpot's pipelines API, maps one, and sees a signed
// delivery to the hook URL on the connection's page, received, then
// recorded on its lead; each page fits a laptop and a phone, one line a
// row.
func TestBrowserCRMConnection(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		if r := a.postLead(key, `{"external_id":"form-1","email":"ada@example.com"}`); r.status != 201 {
			t.Fatalf("post lead = %d %s", r.status, r.raw)
		}
		a.hubspot.AddStage("default", "Sales pipeline", "appointmentscheduled", "Appointment scheduled")
		a.hubspot.AddStage("default", "Sales pipeline", "closedwon", "Closed won")
		a.hubspot.AddDeal("987654321", "closedwon", "1500.00", "EUR", "501")
		a.hubspot.AddContact("501", "ada@example.com", "", nil)
		const secret = "hs-client-secret-for-the-browser"
		base := a.srv.URL + views.AccountURL(acc.ID, "")

		b := chrome(t)
		b.login(a.srv.URL, "acme-owner@example.com")
		b.eachWidth("crm-card-empty", base+"/stages", `[data-testid="crm-card"]`, func(int64) {
			if got := b.text(`[data-testid="crm-empty"]`); !strings.Contains(got, "its own URL") {
				t.Errorf("the empty card says %q", got)
			}
		})
		b.do(
			click(`[data-testid="crm-add-hubspot"]`),
			visible(`[data-testid="crm-form"]`),
		)
		// The steps come first, in HubSpot's order: each secret is asked
		// for in the step that says where it is and what it does, and the
		// step after saving says where the URL goes.
		b.eachWidth("crm-form", b.location(), `[data-testid="crm-form"]`, func(int64) {
			b.above("the HubSpot form", `[data-testid="crm-intro"]`, `[data-testid="crm-step"]:nth-child(1)`,
				`[data-testid="crm-step"]:nth-child(3) #f-api_token`, `[data-testid="crm-step"]:nth-child(4) #f-secret`,
				`[data-testid="save-crm"]`, `[data-testid="crm-url-start"]`)
			if got := b.text(`[data-testid="crm-step"]:nth-child(4)`); !strings.Contains(got, "HubSpot signs every delivery with it") {
				t.Errorf("the client secret's step says %q", got)
			}
			if got, want := b.text(`[data-testid="crm-url-start"]`), a.srv.URL+"/hooks/hubspot/…"; got != want {
				t.Errorf("the URL's start = %q; want %q", got, want)
			}
		})
		b.eachWidth("crm-form-pipedrive", base+"/stages/crm/new?kind=pipedrive", `[data-testid="crm-form"]`, func(int64) {
			b.above("the Pipedrive form", `[data-testid="crm-step"]:nth-child(1) #f-secret`, `[data-testid="crm-step"]:nth-child(2) #f-api_token`, `[data-testid="save-crm"]`)
			if got := b.text(`[data-testid="crm-step"]:nth-child(1)`); !strings.Contains(got, "You make it up") {
				t.Errorf("the webhook password's step says %q", got)
			}
		})
		b.do(chromedp.Navigate(base+"/stages/crm/new?kind=hubspot"), visible(`[data-testid="crm-form"]`))
		b.do(
			typeInto(`#f-name`, "Sales pipeline"),
			typeInto(`#f-secret`, secret),
			typeInto(`#f-api_token`, hubspotToken),
			click(`[data-testid="save-crm"]`),
			visible(`[data-testid="crm-hook-url"]`),
		)
		c := onlyConnection(t, s, acc)
		page := b.location()
		if got := b.text(`[data-testid="crm-hook-url"]`); got != a.srv.URL+"/hooks/hubspot/"+c.Token {
			t.Errorf("hook URL = %q", got)
		}

		// The stage ids from HubSpot's pipelines, then a mapping.
		b.do(click(`[data-testid="crm-load"]`))
		b.waitJS("the stages loaded", `[...document.querySelectorAll('[data-testid="flash"]')].some(f => f.textContent.includes("Loaded 2 stages from HubSpot"))`)
		b.do(
			visible(`tr[data-crm-stage="closedwon"]`),
			chromedp.SetValue(chromedp.CSS(`tr[data-crm-stage="closedwon"] select`), "won"),
			click(`[data-testid="crm-map-save"]`),
		)
		b.waitJS("the stages saved", `[...document.querySelectorAll('[data-testid="flash"]')].some(f => f.textContent.includes("Stages saved"))`)
		if got := b.value(`tr[data-crm-stage="closedwon"] select`); got != "won" {
			t.Errorf("closedwon maps to %q after saving", got)
		}

		// A delivery HubSpot signs, posted to the hook URL.
		won := crmtest.HubSpotDealStage(62515, "987654321", "closedwon", a.clock().Add(-time.Minute))
		if r := a.postHubSpot(c, secret, won); r.status != 200 || r.Stored != 1 {
			t.Fatalf("post the delivery = %d %s", r.status, r.raw)
		}
		b.eachWidth("crm-connection", page, `[data-testid="crm-delivery"]`, func(int64) {
			b.oneLineRows("stage table", `[data-testid="crm-stage-table"]`)
			b.oneLineRows("deliveries", `[data-testid="crm-delivery-table"]`)
			if got := b.text(`[data-testid="crm-delivery-outcome"] .badge`); got != "Received, not processed yet" {
				t.Errorf("outcome = %q", got)
			}
			b.above("the connection page", `[data-testid="crm-hook-url"]`, `[data-testid="crm-stages"]`, `[data-testid="crm-deliveries"]`)
		})
		a.work()
		b.do(chromedp.Navigate(page), visible(`[data-testid="crm-delivery-lead"]`))
		if got := b.text(`[data-testid="crm-delivery-outcome"] .badge`); got != "Recorded as won" {
			t.Errorf("outcome after the worker = %q", got)
		}
		// Its body as received, folded under its outcome.
		b.do(click(`[data-testid="crm-delivery-body-toggle"]`), visible(`[data-testid="crm-delivery-body"]`))
		if got := b.text(`[data-testid="crm-delivery-body"]`); !strings.Contains(got, `"propertyValue": "closedwon"`) {
			t.Errorf("body = %q", got)
		}
		b.fits("the connection page with a body open")

		b.eachWidth("crm-card", base+"/stages", `[data-testid="crm-row"]`, func(int64) {
			b.oneLineRows("connections", `[data-testid="crm-table"]`)
			if got := b.text(`[data-testid="crm-kind"]`); got != crm.HubSpot.Title() {
				t.Errorf("kind = %q", got)
			}
		})
		b.eachWidth("crm-edit", page+"/edit", `[data-testid="crm-form"]`, nil)
		generic := a.connection(acc, crm.Generic, "Zapier", "generic-secret", "")
		b.eachWidth("crm-generic", base+"/stages/crm/"+itoa(generic.ID), `[data-testid="crm-stages"]`, func(int64) {
			if got := b.text(`[data-testid="crm-curl"]`); !strings.Contains(got, "X-Leadsignal-Signature: t=$T,v1=$SIG") {
				t.Errorf("curl = %q", got)
			}
		})
		b.eachWidth("crm-generic-form", base+"/stages/crm/"+itoa(generic.ID)+"/edit", `[data-testid="crm-fields"]`, nil)

		// A delivery stuck on an unmapped stage puts a banner on the
		// account's pages that leads to the stage table.
		if r := a.postHook("/hooks/generic/"+generic.Token, []byte(`{"email":"a@example.com","stage":"S-1"}`),
			"Authorization", "Bearer generic-secret"); r.status != 200 {
			t.Fatalf("post = %d %s", r.status, r.raw)
		}
		if err := s.MapCRMStages(t.Context(), acc.ID, generic.ID, map[string]string{"S-1": ""}, a.clock()); err != nil {
			t.Fatal(err)
		}
		a.work()
		b.eachWidth("crm-stuck-alert", base+"/leads", `[data-testid="account-alert"]`, func(int64) {
			if got := b.text(`[data-testid="account-alert"]`); !strings.Contains(got, "Zapier: 1 delivery waits for a stage mapping") {
				t.Errorf("alert = %q", got)
			}
		})
		b.do(click(`[data-testid="account-alert"] a`), visible(`[data-testid="crm-stages"]`))
	})
}

// An administrator sets the public address on Server settings: a bad one
// is refused at its field, the address the browser uses is one click; the
// page fits a laptop and a phone.
func TestBrowserServerSettings(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		a.user("admin@example.com", true)
		b := chrome(t)
		b.login(a.srv.URL, "admin@example.com")
		b.eachWidth("server-settings-unset", a.srv.URL+"/admin/settings", `[data-testid="public-url-form"]`, func(int64) {
			if got := b.text(`[data-testid="public-url-here"]`); got != a.srv.URL {
				t.Errorf("the page offers %q; want the browser's address %q", got, a.srv.URL)
			}
		})
		for _, w := range widths {
			b.do(
				chromedp.EmulateViewport(w, 900),
				chromedp.Navigate(a.srv.URL+"/admin/settings"),
				typeInto(`#f-public_url`, "javascript:alert(1)"),
				click(`[data-testid="save-public-url"]`),
				visible(`[data-testid="error-public_url"]`),
			)
			b.fits("the refused address at " + itoa(w) + " px")
			b.do(shot("server-settings-error-" + itoa(w)))
		}
		b.do(chromedp.EmulateViewport(1280, 900), click(`[data-testid="use-here"]`))
		b.waitJS("the address saved", `[...document.querySelectorAll('[data-testid="flash"]')].some(f => f.textContent.includes("Public address saved"))`)
		if got := b.value(`#f-public_url`); got != a.srv.URL {
			t.Errorf("the field holds %q after saving; want %q", got, a.srv.URL)
		}
		b.eachWidth("server-settings", a.srv.URL+"/admin/settings", `[data-testid="public-url-form"]`, nil)
	})
}
