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

// Leads that test a page's width: a long name, email and message, a junk
// lead with three signals, a partial lead.
const (
	longLead = `{"first_name":"Maximiliana-Alexandrina","last_name":"Konstantinopoulou-Papadopoulou von Hohenzollern",
		"email":"maximiliana.alexandrina.konstantinopoulou@a-very-long-company-domain-example.com","phone":"+1 415 692 4299",
		"client_ip_address":"203.0.113.7","client_user_agent":"Mozilla/5.0 (Test)",
		"event_source_url":"https://example.com/landing/roofing/quote-request-form?utm_source=facebook&utm_campaign=spring_roofing_promotion_2026_extended",
		"message":"We have a very long message here: the roof of our warehouse at the far end of the industrial estate leaks in three places after every storm, and the gutters overflow onto the loading dock. Could someone come by next week to measure and quote a full replacement, including insulation and new downpipes? Superlongwordwithoutanyspacesthatcouldwidenthepageifnothingbreaksitanywhere.",
		"fill_seconds":40,"created_at":"2026-12-01T09:00:00Z","fields":{"company":"Konstantinopoulou Industrial Roofing and Warehousing Holdings Ltd","budget":"25000"}}`
	junkLead = `{"first_name":"Bot","email":"seo-offers@mailinator.com","phone":"555-555-5555","honeypot":"http://spam.example",
		"fill_seconds":1,"message":"We offer SEO services and backlinks for your website","created_at":"2026-12-01T09:30:00Z"}`
	partialLead = `{"email":"half@example.com","partial":true,"created_at":"2026-12-01T09:45:00Z"}`
)

// seedLeads posts 60 plain leads and the three that test the width, to an
// account whose dataset sends a Lead for each complete lead (dry run).
func seedLeads(t *testing.T, a *app, acc models.Account, key string) (long, junk, partial apiReply) {
	t.Helper()
	d := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
	if err := a.store.CreateDataset(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		r := a.postLead(key, fmt.Sprintf(`{"first_name":"Person","last_name":"Number %02d","email":"user%02d@example.com","phone":"+1 415 692 %04d",
			"fill_seconds":30,"created_at":"2026-11-%02dT%02d:15:00Z"}`, i, i, 4000+i, 20+i/10, i%10+8))
		if r.status != http.StatusCreated {
			t.Fatalf("lead %d: %d %s", i, r.status, r.raw)
		}
	}
	long, junk, partial = a.postLead(key, longLead), a.postLead(key, junkLead), a.postLead(key, partialLead)
	if long.status != http.StatusCreated || partial.status != http.StatusCreated {
		t.Fatalf("long lead %d %s, partial lead %d %s", long.status, long.raw, partial.status, partial.raw)
	}
	if len(junk.JunkReasons) < 3 {
		t.Fatalf("junk lead = %d %s; want three signals or more", junk.status, junk.raw)
	}
	return long, junk, partial
}

// TestBrowserLeadsListDense: the leads list is one line a lead at 1280 and
// 390 px, its badges whole, long values cut and whole on hover, the name
// links to the lead, and its filters apply as they change, in place.
func TestBrowserLeadsListDense(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		long, junk, _ := seedLeads(t, a, acc, key)
		base := a.srv.URL + "/accounts/" + itoa(acc.ID)
		b := chrome(t)
		b.login(a.srv.URL, "acme-owner@example.com")

		b.eachWidth("leads-list", base+"/leads", `[data-testid="leads-table"]`, func(width int64) {
			b.oneLineRows(fmt.Sprintf("leads list at %d px", width), `[data-testid="leads-table"]`)
			if width == 1280 {
				if over := evalJS[int](b, `(() => { const t = document.querySelector('[data-testid="leads-table"]');
					return t.scrollWidth - t.parentElement.clientWidth; })()`); over > 0 {
					t.Errorf("at 1280 px the table is %d px wider than its box", over)
				}
			}
			// Badges are whole: inside their cell, never cut.
			if cut := evalJS[[]string](b, `[...document.querySelectorAll('[data-testid="lead-row"] .badge')].filter(e => {
					const r = e.getBoundingClientRect(), c = e.closest("td").getBoundingClientRect();
					return e.scrollWidth > e.clientWidth + 1 || r.right > c.right + 1 || r.width === 0;
				}).map(e => e.textContent)`); len(cut) > 0 {
				t.Errorf("at %d px badges are cut: %q", width, cut)
			}
			// A phone shows who, when, the stage and what was sent; the
			// email, phone and source are on a laptop and the lead page.
			if width == 390 {
				if got := evalJS[[]string](b, `[...document.querySelectorAll('[data-testid="leads-table"] thead th')].filter(th => th.offsetParent).map(th => th.textContent.trim())`); strings.Join(got, ",") != "Name,Captured,Stage,Sent as" {
					t.Errorf("at 390 px the leads list's columns are %q; want Name, Captured, Stage, Sent as", got)
				}
				return
			}
			// A long value is cut with an ellipsis and whole on hover.
			link := fmt.Sprintf(`[data-testid="lead-link"][href$="/leads/%d"]`, long.LeadID)
			email := evalJS[[]string](b, `(() => { const e = document.querySelector('`+link+`').closest("tr").querySelector('[data-testid="lead-email"]');
				return [String(e.scrollWidth > e.clientWidth), e.title, getComputedStyle(e).textOverflow]; })()`)
			if email[0] != "true" || !strings.HasPrefix(email[1], "maximiliana.alexandrina") || email[2] != "ellipsis" {
				t.Errorf("at %d px the long email: cut %s, title %q, overflow %s; want cut with an ellipsis, whole on hover", width, email[0], email[1], email[2])
			}
		})

		// The name is the link to the lead page; the list is newest first.
		if got := b.text(`#lead-rows tr:first-child [data-testid="lead-link"]`); got != "half@example.com" {
			t.Errorf("first row's link = %q; want the partial lead, by its email (it has no name)", got)
		}
		if row := b.text(fmt.Sprintf(`#lead-rows tr:has([href$="/leads/%d"])`, junk.LeadID)); !strings.Contains(row, "junk") || !strings.Contains(row, "Bot") {
			t.Errorf("the junk lead's row = %q; want its name and a junk badge", row)
		}
		b.do(click(fmt.Sprintf(`[data-testid="lead-link"][href$="/leads/%d"]`, long.LeadID)), visible(`[data-testid="person"]`))
		if got := b.text(`[data-testid="lead-title"]`); !strings.HasPrefix(got, "Maximiliana-Alexandrina") {
			t.Errorf("the name link opened %q", got)
		}
		if loc := b.location(); !strings.HasSuffix(loc, "/leads/"+itoa(long.LeadID)) {
			t.Errorf("the name link went to %q", loc)
		}

		// Filters apply as they change, in place, and the URL keeps them:
		// on a laptop, and on a phone behind the Filters button.
		for _, width := range widths {
			b.do(chromedp.EmulateViewport(width, 900), chromedp.Navigate(base+"/leads"), visible(`[data-testid="leads-table"]`), markNoReload())
			if width < 600 {
				if b.count(`[data-testid="lead-filters"] select[name="junk"]:not([hidden])`) == 1 &&
					evalJS[bool](b, `getComputedStyle(document.querySelector('[data-testid="lead-filters"] select[name="junk"]')).display !== "none" &&
						!!document.querySelector('[data-testid="lead-filters"] select[name="junk"]').offsetParent`) {
					t.Errorf("at %d px the filters show before the Filters button is pressed", width)
				}
				b.do(click(`[data-testid="filters-toggle"]`), visible(`[data-testid="lead-filters"] select[name="junk"]`))
			}
			b.pick(`[data-testid="lead-filters"] select[name="junk"]`, "junk")
			b.waitJS("the junk filter", `location.search.includes("junk=junk") && document.querySelectorAll('[data-testid="lead-row"]').length === 1`)
			if got := b.text(`[data-testid="leads-total"]`); got != "1 lead matches" {
				t.Errorf("at %d px the count after filtering = %q", width, got)
			}
			b.do(typeInto(`[data-testid="lead-filters"] input[name="q"]`, "nobody-like-this"))
			b.waitJS("the search", `location.search.includes("q=nobody") && !!document.querySelector('[data-testid="leads-empty"]')`)
			if !b.pageKept() {
				t.Errorf("at %d px filtering reloaded the page; want the results swapped in place", width)
			}
			if got := evalJS[string](b, `document.querySelector('[data-testid="filters-toggle"] .badge')?.textContent ?? ""`); got != "2" {
				t.Errorf("at %d px the Filters button counts %q filters after two were set in place; want 2", width, got)
			}
			b.fits(fmt.Sprintf("filtered leads at %d px", width))
			b.do(shot(fmt.Sprintf("leads-list-filtered-%d", width)))
		}
		b.do(chromedp.EmulateViewport(1280, 900))
	})
}

// TestBrowserLeadPage: the lead page reads who the lead is and what they
// wrote, what happened to them, the stage buttons, then the match keys,
// at 1280 and 390 px, for a long lead, a junk lead and a partial one; a
// rule made after the lead says why it made no event, and links to
// applying it.
func TestBrowserLeadPage(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		long, junk, partial := seedLeads(t, a, acc, key)
		ds, err := s.Datasets(t.Context(), acc.ID)
		if err != nil || len(ds) != 1 {
			t.Fatalf("datasets = %v, %v", ds, err)
		}
		a.advance(time.Minute) // the rule is made after the leads
		late := models.SendRule{AccountID: acc.ID, DatasetID: ds[0].ID, Name: "Big budgets", Mode: "automatic_match", EventName: "QualifiedLead",
			Combinator: "and", Conditions: `[{"field":"fields.budget","match_type":"gt","pattern":"10000"}]`, Enabled: true}
		if err := s.CreateSendRule(t.Context(), &late, nil); err != nil {
			t.Fatal(err)
		}
		a.drain()
		base := a.srv.URL + "/accounts/" + itoa(acc.ID)
		b := chrome(t)
		b.login(a.srv.URL, "acme-owner@example.com")

		order := func(what string) {
			b.above(what, `[data-testid="person"]`, `[data-testid="timeline"]`, `[data-testid="actions"]`, `[data-testid="keys"]`)
		}
		b.eachWidth("lead-long", fmt.Sprintf("%s/leads/%d", base, long.LeadID), `[data-testid="person"]`, func(width int64) {
			order(fmt.Sprintf("long lead at %d px", width))
			if got := b.text(`[data-testid="lead-company"]`); got != "Konstantinopoulou Industrial Roofing and Warehousing Holdings Ltd" {
				t.Errorf("company = %q", got)
			}
			if msg := b.text(`[data-testid="lead-message"]`); !strings.HasPrefix(msg, "We have a very long message here") {
				t.Errorf("message = %q", msg)
			}
			// Why no event reached Meta, rule by rule: one made after the
			// lead, the default rule's event built in dry run.
			notes := evalJS[[]string](b, `[...document.querySelectorAll('[data-testid="why-no-event"] li')].map(e => e.textContent.replace(/\s+/g, " ").trim())`)
			want := []string{
				"Completed leads to Main The Lead event was built, not sent: the dataset Main is in dry-run mode.",
				"Big budgets No QualifiedLead event: the rule was created after the lead last changed, and rules decide a lead's events when the lead changes. Apply Big budgets…",
			}
			if !slices.Equal(notes, want) {
				t.Errorf("at %d px the page says why no event:\n%q\nwant\n%q", width, notes, want)
			}
			if href := evalJS[string](b, `document.querySelector('[data-testid="rule-apply"]').getAttribute("href")`); !strings.HasSuffix(href, "/rules/"+itoa(late.ID)+"/apply") {
				t.Errorf("apply link = %q; want Big budgets' apply confirmation", href)
			}
			// Its Lead event: built in dry run, with a link to the send log.
			ev := b.text(`[data-testid="timeline-event"]`)
			if !strings.Contains(ev, "Lead for Main") || !strings.Contains(ev, "Dry run") || !strings.Contains(ev, "In the send log") {
				t.Errorf("the event in the timeline = %q", ev)
			}
		})
		b.eachWidth("lead-junk", fmt.Sprintf("%s/leads/%d", base, junk.LeadID), `[data-testid="person"]`, func(width int64) {
			order(fmt.Sprintf("junk lead at %d px", width))
			if n := b.count(`[data-testid="timeline-junk"] [data-testid="junk-reasons"] li`); n != len(junk.JunkReasons) {
				t.Errorf("the junk verdict lists %d reasons; want %d", n, len(junk.JunkReasons))
			}
			if got := b.text(`[data-testid="lead-junk"]`); got != "junk" {
				t.Errorf("junk badge = %q", got)
			}
		})
		b.eachWidth("lead-partial", fmt.Sprintf("%s/leads/%d", base, partial.LeadID), `[data-testid="person"]`, func(width int64) {
			order(fmt.Sprintf("partial lead at %d px", width))
			if got := b.text(`[data-testid="timeline-captured"]`); !strings.Contains(got, "partial") {
				t.Errorf("captured entry = %q; want it marked partial", got)
			}
		})
		// The keys open from their fold, and fit too.
		b.do(
			chromedp.EmulateViewport(390, 900),
			chromedp.Navigate(fmt.Sprintf("%s/leads/%d", base, long.LeadID)),
			visible(`[data-testid="keys"] summary`),
			click(`[data-testid="keys"] summary`),
			visible(`[data-testid="match-keys"]`),
		)
		b.fits("the long lead's keys at 390 px")
		if raw := b.text(`[data-testid="raw-fields"]`); !strings.Contains(raw, "Time to fill the form") || !strings.Contains(raw, "Budget (form field)") {
			t.Errorf("every field as posted = %q; want human labels", raw)
		}
		b.do(chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="keys"]`)), screenshot("lead-long-keys-390"), chromedp.EmulateViewport(1280, 900))
	})
}
