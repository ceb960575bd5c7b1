//go:build browser

package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestBrowserAgencyAlerts opens the agency overview of an agency with
// broken and healthy accounts at 1280 and 390 px: nothing is wider than
// the screen, a row is one line, and on a phone what needs attention
// comes first in each row, before the account's name; the numbers
// scroll.
func TestBrowserAgencyAlerts(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		now := a.clock()
		owner := a.user("agency@example.com", false)
		for i, slug := range []string{"northwind-roofing-and-solar-installations", "acme", "globex", "initech"} {
			acc := a.account(slug, owner)
			_, key, err := s.CreateIngestKey(ctx, acc.ID, "website")
			if err != nil {
				t.Fatal(err)
			}
			switch i {
			case 0: // no dataset, every lead junk, a label the stages lack
				for j := range 6 {
					if r := a.postLead(key, fmt.Sprintf(`{"external_id":"n-%d","email":"n%d@example.com","source":"crm","honeypot":"x"}`, j, j)); r.status != http.StatusCreated {
						t.Fatalf("post lead = %d %s", r.status, r.raw)
					}
				}
				if r := a.postStage(key, fmt.Sprintf(`{"lead":{"external_id":"n-1"},"stage":"Angebot verschickt (Vertrieb Süd)","occurred_at":%q}`,
					now.Add(time.Minute).Format(time.RFC3339))); r.status != http.StatusCreated {
					t.Fatalf("post stage = %d %s", r.status, r.raw)
				}
			case 1: // a dry run for 20 days
				a.dataset(acc, models.ModeDryRun, now.Add(-20*24*time.Hour))
			case 2: // a website lead Meta would refuse: failed, nothing sent
				a.dataset(acc, models.ModeLive, now)
				if r := a.postLead(key, `{"email":"g@example.com"}`); r.status != http.StatusCreated {
					t.Fatalf("post lead = %d %s", r.status, r.raw)
				}
				a.drain()
			default:
				a.dataset(acc, models.ModeDryRun, now)
			}
		}

		b := chrome(t)
		b.login(a.srv.URL, "agency@example.com")
		b.do(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(a.srv.URL+"/accounts"), visible(`[data-testid="accounts-table"]`),
			shot("agency-alerts-1280"))
		if n := b.count(`[data-testid="account-row"]`); n != 4 {
			t.Errorf("agency overview lists %d accounts; want 4", n)
		}
		if w := evalJS[int](b, `document.documentElement.scrollWidth - window.innerWidth`); w > 0 {
			t.Errorf("at 1280 px the agency overview is %d px wider than the screen", w)
		}
		// No column is clipped: the table fits its box, the role included.
		if w := evalJS[float64](b, `document.querySelector('[data-testid="accounts-table"]').getBoundingClientRect().width - document.querySelector('.table-wrap').getBoundingClientRect().width`); w > 0 {
			t.Errorf("at 1280 px the accounts table is %.0f px wider than its box: its last columns are cut", w)
		}
		b.oneLineRows("agency overview at 1280 px", `[data-testid="accounts-table"]`)
		if got := b.text(`[data-testid="account-row"] [data-testid="account-alerts"]`); got == "All good" {
			t.Errorf("the first row is all good; want the broken account first")
		}
		b.do(chromedp.EmulateViewport(390, 844), chromedp.Reload(), visible(`[data-testid="accounts-table"]`), shot("agency-alerts-390"))
		if w := evalJS[int](b, `document.documentElement.scrollWidth - window.innerWidth`); w > 0 {
			t.Errorf("at 390 px the agency overview is %d px wider than the screen", w)
		}
		// Every row: its alerts first, one line, on the screen, then its
		// name; the numbers scroll.
		bad := evalJS[int](b, `[...document.querySelectorAll('[data-testid="account-row"]')].filter(r => {
			const al = r.querySelector('[data-testid="account-alerts"]').getBoundingClientRect();
			const name = r.querySelector('th').getBoundingClientRect();
			return !(al.left < name.left && al.right <= window.innerWidth && name.left < window.innerWidth);
		}).length`)
		if bad > 0 {
			t.Errorf("at 390 px %d rows do not show their alerts first, on the screen", bad)
		}
		b.oneLineRows("agency overview at 390 px", `[data-testid="accounts-table"]`)
		if title := evalJS[string](b, `document.querySelector('[data-testid="account-alerts"]').title`); !strings.Contains(title, "No destination") ||
			!strings.Contains(title, "All 6 leads junk") || !strings.Contains(title, "Angebot verschickt") {
			t.Errorf("the first row's alerts say in full %q; want each of them", title)
		}
	})
}
