//go:build browser

package web_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/internal/demo"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestBrowserOverviewAndAgency opens the demo account's Overview as a
// viewer and the agency overview as a member of two accounts, at 1280 and
// 390 px: the headline numbers are the store's, the chart and funnel are
// drawn, nothing is wider than a phone, and a viewer gets no dataset
// settings.
func TestBrowserOverviewAndAgency(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		d, err := demo.Seed(ctx, s, demo.Options{Now: a.clock()})
		if err != nil {
			t.Fatal(err)
		}
		acc := d.Account
		viewer := a.user("vic@example.com", false)
		if err := s.SetMember(ctx, acc.ID, viewer.ID, models.RoleViewer); err != nil {
			t.Fatal(err)
		}
		agency := a.user("agency@example.com", false)
		if err := s.SetMember(ctx, acc.ID, agency.ID, models.RoleEditor); err != nil {
			t.Fatal(err)
		}
		a.account("calm", agency)

		// The numbers the Overview should show: the store's own count of
		// the last 28 days' leads in the account's zone.
		loc, err := time.LoadLocation(acc.Timezone)
		if err != nil {
			t.Fatal(err)
		}
		y, m, day := a.clock().In(loc).Date()
		tomorrow := time.Date(y, m, day+1, 0, 0, 0, 0, loc)
		want := func(f store.LeadFilter) string {
			f.From, f.To = tomorrow.AddDate(0, 0, -28), tomorrow
			n, err := s.CountLeads(ctx, acc.ID, f, 1_000_000)
			if err != nil {
				t.Fatal(err)
			}
			return strings.TrimSpace(fmt.Sprintf("%d", n))
		}
		leads, junk := want(store.LeadFilter{}), want(store.LeadFilter{Junk: "junk"})
		if leads == "0" || junk == "0" {
			t.Fatalf("the demo seeded %s leads, %s junk; want some of each", leads, junk)
		}

		home := a.srv.URL + "/accounts/" + itoa(acc.ID)
		b := chrome(t)
		b.login(a.srv.URL, "vic@example.com")
		b.do(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(home), visible(`[data-testid="headline"]`), shot("overview-viewer-1280"))
		if got := strings.ReplaceAll(b.text(`[data-testid="count-leads-2"]`), ",", ""); got != leads {
			t.Errorf("leads, last 28 days = %s; want %s", got, leads)
		}
		if got := strings.ReplaceAll(b.text(`[data-testid="count-junk-2"]`), ",", ""); got != junk {
			t.Errorf("junk, last 28 days = %s; want %s", got, junk)
		}
		if n := b.count(`[data-testid="weekly-chart"] svg [class*="chart-line"]`); n < 3 {
			t.Errorf("chart draws %d lines; want leads, junk and qualified", n)
		}
		// The chart starts at the account's first week: the demo's four
		// weeks of leads, not twelve.
		if n := b.count(`[data-testid="chart-table"] tbody tr`); n < 4 || n > 5 {
			t.Errorf("chart's table has %d weeks; want the demo's 4 or 5", n)
		}
		if first := b.text(`[data-testid="chart-table"] tbody tr:first-child td`); first == "0" {
			t.Errorf("chart's first week counts %s leads; want the first week with leads", first)
		}
		if n := b.count(`[data-testid="funnel-step"]`); n != 4 {
			t.Errorf("funnel has %d steps; want leads and the 3 mapped stages", n)
		}
		if n := b.count(`[data-testid="readiness-check"]`); n < 4 {
			t.Errorf("%d readiness checks; want at least 4", n)
		}
		// Each table says what it counts; the demo's deals move every day.
		for sel, head := range map[string]string{
			`[data-testid="headline"] thead th`:   "Leads captured in",
			`[data-testid="headline-reached"] th`: "by when they reached it",
		} {
			if got := b.text(sel); !strings.Contains(got, head) {
				t.Errorf("%s = %q; want %q", sel, got, head)
			}
		}
		if got := b.text(`[data-testid="funnel"] figcaption`); !strings.Contains(got, "by when leads reached them") {
			t.Errorf("funnel title = %q", got)
		}
		if got := b.text(`[data-testid="readiness"]`); !strings.Contains(got, "stage changes on 7 of the last 7 full days") {
			t.Errorf("the demo's readiness = %q; want stage changes on every day", got)
		}
		if n := b.count(`a[href$="/datasets"], a[href$="/settings"]`); n != 0 {
			t.Errorf("a viewer has %d links to dataset settings", n)
		}
		b.do(chromedp.EmulateViewport(390, 844), chromedp.Reload(), visible(`[data-testid="headline"]`), shot("overview-viewer-390"))
		if w := evalJS[int](b, `document.querySelector("main").scrollWidth - window.innerWidth`); w > 0 {
			t.Errorf("at 390 px the Overview is %d px wider than the screen", w)
		}

		// The agency user: the switcher leads to every account's row.
		b.do(click(`[data-testid="user-menu"]`), click(`[data-testid="logout"]`), visible(`[data-testid="login-form"]`))
		b.login(a.srv.URL, "agency@example.com")
		b.do(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(home), visible(`[data-testid="headline"]`),
			// The switcher loads its list when it opens; its link to all
			// accounts is then the list's last.
			click(`[data-testid="account-switcher"]`), visible(`.account-switcher [data-testid="switch-account"]`),
			click(`.account-switcher a[href="/accounts"]`), visible(`[data-testid="accounts-table"]`),
			shot("agency-1280"))
		if n := b.count(`[data-testid="account-row"]`); n != 2 {
			t.Errorf("agency overview lists %d accounts; want 2", n)
		}
		b.do(chromedp.EmulateViewport(390, 844), chromedp.Reload(), visible(`[data-testid="accounts-table"]`), shot("agency-390"))
		if w := evalJS[int](b, `document.querySelector("main").scrollWidth - window.innerWidth`); w > 0 {
			t.Errorf("at 390 px the agency overview is %d px wider than the screen", w)
		}
		b.do(click(`[data-testid="account-row"] [data-testid="account-name"]`), visible(`[data-testid="headline"], [data-testid="overview-empty"]`))
	})
}
