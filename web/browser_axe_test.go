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
// serious or critical violation on any, and no page is wider than its
// screen.
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

	b := chromeFor(t, 6*time.Minute)
	b.login(a.srv.URL, owner.Email)
	home := "/accounts/" + itoa(d.Account.ID)
	b.walk(a.srv.URL, home, []string{home, "/accounts", "/password", "/admin/users", "/accounts/new",
		"/accounts/" + itoa(other.ID),
		home + "/rules/new", home + "/datasets/new", home + "/stages/mappings/new", home + "/stages/uploads",
		home + "/stages/crm/new?kind=hubspot", home + "/stages/crm/" + itoa(conn.ID) + "/edit"},
		func(path string, w int64) {
			b.axe(fmt.Sprintf("%s at %d px", path, w))
			if wide := evalJS[bool](b, `document.documentElement.scrollWidth > innerWidth`); wide {
				t.Errorf("%s at %d px: the page is %s px wide", path, w, strings.TrimSpace(fmt.Sprint(evalJS[float64](b, `document.documentElement.scrollWidth`))))
			}
		})
}
