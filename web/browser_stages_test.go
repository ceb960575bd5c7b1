//go:build browser

package web_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestBrowserStagesTemplateThenWon maps the stages from the template in
// one click, reorders and adds stages in place, maps a stage the CRM sent
// through its form (with a condition row added in place), then marks a
// lead won through POST /api/v1/stages and finds in the send log the
// Purchase after the QualifiedLead and Schedule it filled in, in order.
// The Stages page is looked at on a 1280 px screen and a 390 px phone.
func TestBrowserStagesTemplateThenWon(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		d := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &d); err != nil {
			t.Fatal(err)
		}
		at := a.clock().Add(-3 * time.Hour).UTC()
		lead := a.postLead(key, fmt.Sprintf(`{"external_id":"form-1","email":"jane@acme-roofing.com","city":"Berlin","created_at":%q,
			"event_source_url":"https://acme-roofing.com/quote","client_user_agent":"Mozilla/5.0 (Test)","client_ip_address":"203.0.113.7"}`,
			at.Format(time.RFC3339)))
		if lead.status != http.StatusCreated {
			t.Fatalf("post lead = %d %s", lead.status, lead.raw)
		}
		// The CRM sends a stage the list lacks.
		if r := a.postStage(key, fmt.Sprintf(`{"lead":{"external_id":"form-1"},"stage":"Negotiation","occurred_at":%q}`,
			at.Add(time.Hour).Format(time.RFC3339))); r.status != http.StatusCreated {
			t.Fatalf("post stage = %d %s", r.status, r.raw)
		}
		base := a.srv.URL + "/accounts/" + itoa(acc.ID)
		b := chrome(t)
		b.login(a.srv.URL, "acme-owner@example.com")

		b.do(
			chromedp.Navigate(base+"/stages"),
			visible(`[data-testid="stage-template"]`),
			shot("stages-template"),
			click(`[data-testid="start-template"]`),
		)
		b.waitJS("the template's mappings", `document.querySelectorAll('[data-testid="mapping-row"]').length === 3`)
		if got := b.tableLines(`[data-testid="mapping-row"] [data-testid="mapping-event"]`); strings.Join(got, ",") != "QualifiedLead,Schedule,Purchase" {
			t.Errorf("mappings after the template = %q", got)
		}

		// Stages added and moved in place, without a page load.
		b.do(
			markNoReload(),
			typeInto(`#add-stage-name`, "Proposal"),
			click(`[data-testid="add-stage"]`),
		)
		b.waitJS("Proposal in the list", `[...document.querySelectorAll('[data-testid="stage-name"]')].some(e => e.textContent === "Proposal")`)
		b.do(click(`[data-stage="Proposal"] [data-testid="stage-up"]`))
		b.waitJS("Proposal before won", `[...document.querySelectorAll('[data-testid="stage-name"]')].map(e => e.textContent).join() === "qualified,booked,Proposal,won"`)
		if !b.pageKept() {
			t.Error("adding or moving a stage reloaded the page")
		}

		// The stage the CRM sent: added to the list and mapped through the
		// form, a condition row added in place.
		b.do(
			click(`[data-stage="Negotiation"] [data-testid="map-unmapped"]`),
			visible(`[data-testid="mapping-form"]`),
		)
		if v := b.value(`#f-stage`); v != "Negotiation" {
			t.Errorf("the mapping form's stage = %q; want Negotiation", v)
		}
		b.do(
			setValue(`#f-event_name`, "SubmitApplication"),
			click(`[data-testid="add-condition"]`),
			visible(`[data-testid="condition-row"]`),
		)
		b.waitJS("htmx to settle", htmxSettled)
		b.do(fill(`[data-testid="condition-row"] select[name="cond_field"]`, "city"))
		// The row comes again for its field: text's match types, no gt.
		b.waitJS("the city's row", `!document.querySelector('[data-testid="condition-row"] option[value="gt"]')`)
		b.do(
			fill(`[data-testid="condition-row"] select[name="cond_match_type"]`, "equals"),
			fill(`[data-testid="condition-row"] input[name="cond_pattern"]`, "Berlin"),
			shot("stages-mapping-form"),
			click(`[data-testid="save-mapping"]`),
		)
		b.waitJS("the Stages page with the new mapping", `!!document.querySelector('[data-stage="Negotiation"] [data-testid="mapping-row"]')`)
		if got := b.text(`[data-stage="Negotiation"] [data-testid="mapping-conditions"]`); got != `leads where City is "Berlin"` {
			t.Errorf("Negotiation's mapping conditions %q", got)
		}
		b.do(shot("stages-1280"))
		if w := evalJS[int](b, `document.documentElement.scrollWidth`); w > 1280 {
			t.Errorf("at 1280 px the page is %d px wide", w)
		}

		// The same page on a phone: no sideways scrolling.
		b.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)), chromedp.Reload(), visible(`[data-testid="stage-list"]`))
		b.do(shot("stages-390"))
		if w := evalJS[int](b, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("on a 390 px phone the Stages page is %d px wide; want no sideways scrolling", w)
		}
		b.do(chromedp.Navigate(base+"/stages/mappings/new"), visible(`[data-testid="mapping-form"]`), shot("stages-mapping-form-390"))
		if w := evalJS[int](b, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("on a 390 px phone the mapping form is %d px wide", w)
		}
		b.do(chromedp.EmulateViewport(1280, 900))

		// The CRM marks the lead won: the Purchase carries the deal's
		// value, after the QualifiedLead and Schedule filled in.
		won := a.postStage(key, fmt.Sprintf(`{"lead":{"external_id":"form-1"},"stage":"won","occurred_at":%q,"value":1200,"currency":"EUR"}`,
			at.Add(2*time.Hour).Format(time.RFC3339)))
		if won.status != http.StatusCreated {
			t.Fatalf("post won = %d %s", won.status, won.raw)
		}
		var names []string
		for _, e := range won.Events {
			names = append(names, fmt.Sprintf("%s/%v", e.EventName, e.FilledIn))
		}
		if got := strings.Join(names, ","); got != "QualifiedLead/true,Schedule/true,Purchase/false" {
			t.Errorf("won queued %s; want QualifiedLead and Schedule filled in, then Purchase", got)
		}
		b.do(
			chromedp.Navigate(base+"/events"),
			visible(`[data-testid="events-table"]`),
			shot("stages-sendlog"),
		)
		rows := b.tableCells(`[data-testid="events-table"]`)
		var shown []string
		for _, r := range rows {
			// The event cell is its name, then "filled in" for one queued
			// for a skipped stage.
			if len(r) > 1 && slices.Contains([]string{"QualifiedLead", "Schedule", "Purchase"}, strings.Fields(r[1])[0]) {
				shown = append(shown, r[1])
			}
		}
		// Newest first: the Purchase, then what was filled in before it.
		if got := strings.Join(shown, ","); got != "Purchase,Schedule filled in,QualifiedLead filled in" {
			t.Errorf("send log shows %s; want Purchase, Schedule filled in, QualifiedLead filled in (newest first)", got)
		}
		evs, err := s.StageChangeEvents(ctx, acc.ID, won.Change.ID)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range evs {
			if i > 0 && !e.EventTime.After(evs[i-1].EventTime) {
				t.Errorf("event times not strictly increasing: %s at %s after %s", e.EventName, e.EventTime, evs[i-1].EventTime)
			}
			if e.EventName == "Purchase" && (e.Value == nil || *e.Value != 1200 || e.Currency != "EUR") {
				t.Errorf("the Purchase carries %v %s; want 1200 EUR", e.Value, e.Currency)
			}
		}
	})
}

// tableLines is the trimmed text of every element matching sel.
func (b *tab) tableLines(sel string) []string {
	b.t.Helper()
	return evalJS[[]string](b, fmt.Sprintf(`[...document.querySelectorAll(%q)].map(e => e.textContent.trim())`, sel))
}
