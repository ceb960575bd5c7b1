//go:build browser

package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// The send log on a laptop and a phone: one line per event, newest first
// by the time each row shows (a rule's batch applied to older leads
// included), nothing wider than the screen; its filters apply on change
// without a page load and keep themselves in the URL; an event's page and
// a retry's message fit too.
func TestBrowserSendLog(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		postRuleLeads(t, f)
		long := f.a.postLead(f.key, ruleLead(8, "bartholomew.featherstonehaugh-vandersloot@acme-roofing-and-gutters.example", "Paris", "100",
			"2026-12-01T08:00:00Z", map[string]any{"first_name": "Bartholomew Alexander", "last_name": "Featherstonehaugh-Vandersloot",
				"event_source_url": "https://example.com/quote?utm_source=fb&utm_medium=paid"}))
		whatsapp := f.a.postLead(f.key, `{"source":"whatsapp","phone":"+1 415 692 4299","first_name":"Wes"}`)
		if long.status != http.StatusCreated || whatsapp.status != http.StatusCreated {
			t.Fatalf("leads: %s %s", long.raw, whatsapp.raw)
		}
		f.a.drain()
		berlin := createRuleForm(t, f, ruleValues("Big Berlin", f.d, "automatic_match", "QualifiedLead", "and", [3]string{"city", "equals", "berlin"}))
		wantStatus(t, "apply", f.b.post(f.url("/"+itoa(berlin.ID)+"/apply"), url.Values{"confirm": {"yes"}}), http.StatusSeeOther)
		f.a.drain()

		base := f.a.srv.URL + "/accounts/" + itoa(f.acc.ID)
		b := chrome(t)
		b.login(f.a.srv.URL, "acme-owner@example.com")
		const table = `[data-testid="events-table"]`
		b.eachWidth("sendlog", base+"/events", table, func(w int64) {
			b.oneLineRows("send log", table)
			queued := evalJS[[]string](b, `[...document.querySelectorAll('[data-testid="event-queued"] time')].map(t => t.getAttribute("datetime"))`)
			if len(queued) != 8 {
				t.Fatalf("%d rows; want 8", len(queued))
			}
			for i := 1; i < len(queued); i++ {
				if queued[i] > queued[i-1] {
					t.Errorf("at %d px row %d was queued %s, after row %d (%s): not newest first by the time shown", w, i+1, queued[i], i, queued[i-1])
				}
			}
			rows := b.tableCells(table)
			if !strings.HasPrefix(rows[0][1], "QualifiedLead") || !strings.HasPrefix(rows[1][1], "QualifiedLead") {
				t.Errorf("at %d px the rows start %q, %q; want the batch applied last on top", w, rows[0][1], rows[1][1])
			}
			// A long name is cut, and whole on hover.
			cut := evalJS[bool](b, `(() => { const a = [...document.querySelectorAll('[data-testid="event-lead"]')].find(a => a.title.startsWith("Bartholomew"));
				return !!a && a.scrollWidth > a.clientWidth && a.title === "Bartholomew Alexander Featherstonehaugh-Vandersloot" })()`)
			if !cut {
				t.Errorf("at %d px the long lead name is not cut with its whole name on hover", w)
			}
		})

		// The status filter applies on change: no page load, the URL keeps it.
		for _, w := range widths {
			b.do(chromedp.EmulateViewport(w, 900), chromedp.Navigate(base+"/events"), visible(table), markNoReload())
			if w < 600 {
				b.do(click(`[data-testid="filters-toggle"]`), visible(`[data-testid="event-filters"] select[name="status"]`))
			}
			b.do(fill(`[data-testid="event-filters"] select[name="status"]`, "held_back"))
			b.waitJS("the status filter", `location.search.includes("status=held_back") && document.querySelectorAll('[data-testid="event-row"]').length === 1`)
			if !b.pageKept() {
				t.Errorf("at %d px the filter reloaded the page", w)
			}
			if st := b.text(`[data-testid="event-row"] [data-testid="event-status"]`); st != "Held back" {
				t.Errorf("at %d px the held-back filter shows %q", w, st)
			}
			b.fits("the filtered send log at " + itoa(w) + " px")
			b.do(shot("sendlog-filtered-" + itoa(w)))
			// An event name applies when it is chosen, with the status kept.
			b.do(fill(`[data-testid="event-filters"] select[name="status"]`, ""), fill(`[data-testid="event-filters"] input[name="event"]`, "QualifiedLead"))
			b.waitJS("the event filter", `location.search.includes("event=QualifiedLead") && !location.search.includes("status=held_back") &&
				[...document.querySelectorAll('[data-testid="event-link"]')].map(a => a.textContent).join() === "QualifiedLead,QualifiedLead"`)
			if !b.pageKept() {
				t.Errorf("at %d px the event filter reloaded the page", w)
			}
			// The CSV download follows the filters the swap applied.
			href := evalJS[string](b, `(() => { const a = document.querySelector('[data-testid="events-csv-link"]');
				return a && a.getBoundingClientRect().width > 0 ? a.getAttribute("href") : "" })()`)
			if !strings.HasSuffix(href, "/events.csv?event=QualifiedLead") {
				t.Errorf("at %d px the CSV link is %q; want the filtered rows' CSV, shown", w, href)
			}
		}
		b.do(chromedp.EmulateViewport(1280, 900))

		// The event's page: its JSON as Meta reads it, the rule that made it.
		longEvents, err := s.LeadEvents(t.Context(), f.acc.ID, long.LeadID)
		if err != nil || len(longEvents) != 1 {
			t.Fatalf("long lead's events %v, %v", longEvents, err)
		}
		b.eachWidth("sendlog-event", base+"/events/"+itoa(longEvents[0].ID), `[data-testid="event-payload"]`, func(w int64) {
			if p := b.text(`[data-testid="event-payload"]`); !strings.Contains(p, "utm_source=fb&utm_medium=paid") {
				t.Errorf("at %d px the payload reads %q", w, p)
			}
			b.above("event page", `h1`, `[data-testid="event-made-by"]`, `[data-testid="event-payload"]`)
		})

		// The WhatsApp lead's Lead event is held back: its page says what to
		// change and where, and offers no Retry, which could not help; nor
		// does the send log.
		heldEvents, err := s.LeadEvents(t.Context(), f.acc.ID, whatsapp.LeadID)
		if err != nil || len(heldEvents) != 1 {
			t.Fatalf("WhatsApp lead's events %v, %v", heldEvents, err)
		}
		b.eachWidth("sendlog-held-back", base+"/events/"+itoa(heldEvents[0].ID), `[data-testid="event-fix"]`, func(w int64) {
			if st := b.text(`h1 [data-testid="event-status"]`); st != "Held back" {
				t.Errorf("at %d px the held-back event reads %q", w, st)
			}
			if fix := b.text(`[data-testid="event-fix"]`); !strings.Contains(fix, "messaging event names") || b.count(`[data-testid="event-fix-link"]`) == 0 {
				t.Errorf("at %d px the fix reads %q with %d links; want what to change on the rule, linked", w, fix, b.count(`[data-testid="event-fix-link"]`))
			}
			if b.count(`[data-testid="retry-event"]`) != 0 || b.count(`[data-testid="retry-note"]`) != 1 {
				t.Errorf("at %d px the held-back event offers a retry, or no word on why not", w)
			}
			b.above("held-back event", `h1`, `[data-testid="event-error"]`, `[data-testid="event-fix"]`, `[data-testid="event-payload"]`)
		})
		b.do(chromedp.Navigate(base+"/events"), visible(table))
		if b.count(`[data-testid="retry-all"]`) != 0 {
			t.Error("the send log offers a retry while no event could go")
		}
	})
}
