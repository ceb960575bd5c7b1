//go:build browser

package web_test

import (
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/internal/demo"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestBrowserEveryPageFits walks the demo account as an owner who is an
// administrator too: every page the navigation reaches and the first
// record of each list, at 1280 and 390 px. No page is wider than the
// screen, every list's rows are one line each, the top bar is one row on
// a phone and the current tab is in view.
func TestBrowserEveryPageFits(t *testing.T) {
	t.Parallel()
	storetest.Either(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		d, err := demo.Seed(ctx, s, demo.Options{Now: a.clock()})
		if err != nil {
			t.Fatal(err)
		}
		owner := a.user("ada.lovelace.with.a.long.address@example-agency.com", true)
		if err := s.SetMember(ctx, d.Account.ID, owner.ID, models.RoleOwner); err != nil {
			t.Fatal(err)
		}
		long := strings.Repeat("Northwind ", 9) + "Roofing"
		_, key, err := s.CreateIngestKey(ctx, d.Account.ID, "website")
		if err != nil {
			t.Fatal(err)
		}
		if r := a.postLead(key, `{"email":"`+strings.Repeat("x", 60)+`@example.com","first_name":"`+long+`","phone":"+14155550100","message":"`+strings.Repeat("A long message. ", 40)+`"}`); r.status != 201 {
			t.Fatalf("post lead = %d %s", r.status, r.raw)
		}

		conn := a.connection(d.Account, crm.HubSpot, long, "hs-client-secret", "")

		b := chrome(t)
		b.login(a.srv.URL, owner.Email)
		home := "/accounts/" + itoa(d.Account.ID)
		b.walk(a.srv.URL, home, []string{home, "/accounts", "/password", "/admin/users", "/accounts/new",
			home + "/rules/new", home + "/datasets/new", home + "/stages/mappings/new", home + "/stages/uploads",
			home + "/stages/crm/new?kind=generic", home + "/stages/crm/" + itoa(conn.ID) + "/edit"},
			func(path string, w int64) {
				for _, table := range evalJS[[]string](b, `[...document.querySelectorAll("main table.list")].map((t, i) => { t.dataset.fitsCheck = i; return '[data-fits-check="' + i + '"]'; })`) {
					b.oneLineRows(path, table)
				}
				if w != 390 {
					return
				}
				if h := evalJS[float64](b, `document.querySelector("header.topbar").getBoundingClientRect().height`); h > 64 {
					t.Errorf("%s at 390 px: the top bar is %.0f px tall; want one row", path, h)
				}
				if overlap := evalJS[string](b, `(() => {
					const items = [...document.querySelectorAll("header.topbar nav > ul > li")].filter(li => li.offsetParent).map(li => [li, li.getBoundingClientRect()]);
					for (const [a, ra] of items) for (const [b, rb] of items)
						if (a !== b && ra.left < rb.right - 1 && rb.left < ra.right - 1 && ra.top < rb.bottom - 1 && rb.top < ra.bottom - 1) return a.textContent.trim() + " / " + b.textContent.trim();
					return "";
				})()`); overlap != "" {
					t.Errorf("%s at 390 px: the top bar's items overlap: %s", path, overlap)
				}
				if off := evalJS[bool](b, `(() => { const nav = document.querySelector("nav.account-nav"), cur = nav && nav.querySelector('[aria-current="page"]');
					if (!cur) return false; const n = nav.getBoundingClientRect(), c = cur.getBoundingClientRect(); return c.left < n.left - 1 || c.right > n.right + 1; })()`); off {
					t.Errorf("%s at 390 px: the current tab is scrolled out of view", path)
				}
			})
		b.do(chromedp.EmulateViewport(1280, 900))
	})
}

// walk opens each page of start, then the pages they link to inside the
// account home (its tabs, a section's own navigation and the first record
// of each list), up to 60 pages, at each of widths; visit checks each.
// Every page is checked to fit its screen (eachWidth).
func (b *tab) walk(base, home string, start []string, visit func(path string, width int64)) {
	b.t.Helper()
	seen := map[string]bool{}
	queue := start
	for len(queue) > 0 && len(seen) < 60 {
		path := queue[0]
		queue = queue[1:]
		if seen[path] {
			continue
		}
		seen[path] = true
		name := strings.NewReplacer("/", "_", "?", "_").Replace(strings.TrimPrefix(path, "/"))
		b.eachWidth("page-"+name, base+path, "main", func(w int64) {
			visit(path, w)
			if w != widths[0] {
				return
			}
			links := evalJS[[]string](b, `[...document.querySelectorAll("nav a[href], main nav a[href], main table.list tbody tr:first-child a[href]")].map(a => a.getAttribute("href"))`)
			for _, l := range links {
				u, err := url.Parse(l)
				if err != nil || u.RawQuery != "" || u.Host != "" || !strings.HasPrefix(u.Path, home) || strings.Contains(u.Path, "/export") || strings.HasSuffix(u.Path, ".csv") {
					continue
				}
				if !seen[u.Path] {
					queue = append(queue, u.Path)
				}
			}
		})
	}
	pages := make([]string, 0, len(seen))
	for p := range seen {
		pages = append(pages, p)
	}
	sort.Strings(pages)
	if len(pages) < 15 {
		b.t.Errorf("walked only %d pages: %v", len(pages), pages)
	}
	b.t.Logf("walked %d pages: %v", len(pages), pages)
}
