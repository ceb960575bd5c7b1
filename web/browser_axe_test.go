//go:build browser

package web_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/internal/demo"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// axeSource is axe-core (web/testdata/axe.min.js, pinned: see
// web/testdata/README.md), read once per test binary. It is a test asset:
// the server never serves it.
var axeSource = sync.OnceValues(func() (string, error) {
	b, err := os.ReadFile("testdata/axe.min.js")
	return string(b), err
})

// axeViolation is one rule axe-core found broken, with its impact
// (minor, moderate, serious or critical) and what it says about it.
type axeViolation struct {
	Impact string `json:"impact"`
	Text   string `json:"text"`
}

// axe runs axe-core on the page open in the tab and fails the test on
// each serious or critical violation, naming the rule, the elements and
// axe's summary of what to fix; it logs the minor and moderate ones.
func (b *tab) axe(what string) {
	b.t.Helper()
	src, err := axeSource()
	if err != nil {
		b.t.Fatalf("axe-core: %v", err)
	}
	if !evalJS[bool](b, `typeof window.axe === "object"`) {
		evalJS[bool](b, src+"\n;true")
	}
	found, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]axeViolation](`axe.run(document, {resultTypes: ["violations"]}).then(r =>
		r.violations.map(v => ({impact: v.impact || "", text: v.impact + " " + v.id + ": " + v.help + "\n\t" + v.nodes.slice(0, 4).map(n =>
			n.target.join(" ") + " (" + (n.failureSummary || "").replace(/\s+/g, " ").slice(0, 220) + ")").join("\n\t")})))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("axe-core on %s: %v", what, err)
	}
	for _, v := range found {
		if v.Impact == "serious" || v.Impact == "critical" {
			b.t.Errorf("%s: %s", what, v.Text)
		} else {
			b.t.Logf("%s: %s", what, v.Text)
		}
	}
}

// TestBrowserEveryPageAccessible walks every page of the demo account, the
// agency overview and the administrator's pages, as an owner of two
// accounts who is an administrator, at 1280 and 390 px: axe-core finds no
// serious or critical violation on any, no page is wider than its screen,
// and each fits as fitsChecks says.
func TestBrowserEveryPageAccessible(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := t.Context()
	a := newApp(t, s)
	d, err := demo.Seed(ctx, s, demo.Options{Now: a.clock()})
	if err != nil {
		t.Fatal(err)
	}
	owner := a.user("ada@example.com", true)
	if err := s.SetMember(ctx, d.Account.ID, owner.ID, models.RoleOwner); err != nil {
		t.Fatal(err)
	}
	other := a.account("bright", owner)
	conn := a.connection(d.Account, crm.HubSpot, "Northwind HubSpot", "hs-client-secret", "")
	if _, err := s.CreateSiteKey(ctx, d.Account.ID, "Northwind website", []string{"https://www.northwind.example"}, a.clock()); err != nil {
		t.Fatal(err)
	}

	b := chromeFor(t, 6*time.Minute)
	b.login(a.srv.URL, owner.Email)
	home := "/accounts/" + itoa(d.Account.ID)
	b.walk(a.srv.URL, home, []string{home, "/accounts", "/password", "/admin/users", "/accounts/new",
		"/accounts/" + itoa(other.ID),
		home + "/rules/new", home + "/datasets/new", home + "/stages/mappings/new", home + "/stages/uploads",
		home + "/stages/crm/new?kind=hubspot", home + "/stages/crm/" + itoa(conn.ID) + "/edit"},
		func(path string, w int64) {
			what := fmt.Sprintf("%s at %d px", path, w)
			b.axe(what)
			if wide := evalJS[bool](b, `document.documentElement.scrollWidth > innerWidth`); wide {
				t.Errorf("%s: the page is %s px wide", what, strings.TrimSpace(fmt.Sprint(evalJS[float64](b, `document.documentElement.scrollWidth`))))
			}
			b.fitsChecks(what, w)
		})
}

// fitsChecks fails the test where a page does not fit: the top bar and
// tabs take more than 100 px above the title; a text cut with an ellipsis
// cannot be read whole on hover; at 1280 px a list scrolls sideways; at
// 390 px a control is under 44 px high.
func (b *tab) fitsChecks(what string, width int64) {
	b.t.Helper()
	if top := evalJS[float64](b, `(() => { const m = document.querySelector("main"), f = m && m.firstElementChild;
		const h = f && (f.matches("h1") ? f : f.matches("hgroup, .title-row") ? f.querySelector("h1") : null);
		return h ? h.getBoundingClientRect().top + scrollY : 0; })()`); top > 100 {
		b.t.Errorf("%s: the title starts %.0f px down; want at most 100", what, top)
	}
	if cut := evalJS[[]string](b, `[...document.querySelectorAll("main *")].filter(el => {
			const cs = getComputedStyle(el);
			if (cs.textOverflow !== "ellipsis" || el.scrollWidth <= el.clientWidth + 1 || !el.offsetParent) return false;
			const text = el.textContent.replace(/\s+/g, " ").trim(), title = (el.closest("[title]")?.title || "").replace(/\s+/g, " ").trim();
			return text !== "" && !title.includes(text);
		}).slice(0, 6).map(el => el.tagName.toLowerCase() + " " + JSON.stringify(el.textContent.trim().slice(0, 40)))`); len(cut) > 0 {
		b.t.Errorf("%s: text cut with no whole text on hover: %s", what, strings.Join(cut, "; "))
	}
	if width == 1280 {
		if wide := evalJS[[]string](b, `[...document.querySelectorAll("main table.list")].filter(t => t.parentElement.scrollWidth > t.parentElement.clientWidth + 1)
			.map(t => (t.dataset.testid || t.className) + " " + t.parentElement.scrollWidth + " > " + t.parentElement.clientWidth)`); len(wide) > 0 {
			b.t.Errorf("%s: lists scroll sideways: %s", what, strings.Join(wide, "; "))
		}
		return
	}
	if small := evalJS[[]string](b, `[...document.querySelectorAll("header.topbar :is(a, summary), nav.account-nav a, main :is(button, select, [role=button], summary, input:not([type=checkbox], [type=radio], [type=hidden], [type=file]))")]
		.filter(el => { const r = el.getBoundingClientRect(); return el.offsetParent && r.width > 0 && r.height < 43.5 && !el.closest("[hidden], details:not([open]) > :not(summary)"); })
		.slice(0, 6).map(el => el.tagName.toLowerCase() + " " + JSON.stringify(el.textContent.trim().slice(0, 30)) + " " + Math.round(el.getBoundingClientRect().height) + " px")`); len(small) > 0 {
		b.t.Errorf("%s: tap targets under 44 px: %s", what, strings.Join(small, "; "))
	}
}
