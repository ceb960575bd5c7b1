package web_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestFlashesAllShownNewestFirst: two actions before the next page each
// leave a message, and that page shows both, the newest first, once.
func TestFlashesAllShownNewestFirst(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		a.user("ada@example.com", true)
		b := a.browser()
		b.login("ada@example.com")
		for _, name := range []string{"First Co", "Second Co"} {
			r := b.post("/accounts", url.Values{"name": {name}, "default_country": {"US"}})
			wantStatus(t, "create "+name, r, http.StatusSeeOther)
		}
		r := b.get("/accounts")
		var got []string
		r.doc.Find(`[data-testid="flash"]`).Each(func(_ int, f *goquery.Selection) {
			got = append(got, f.Text())
		})
		want := []string{"Account Second Co created.", "Account First Co created."}
		if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("flashes = %q; want %q, newest first", got, want)
		}
		if n := b.get("/accounts").doc.Find(`[data-testid="flash"]`).Length(); n != 0 {
			t.Errorf("%d flashes on the next page; want none: each shows once", n)
		}
	})
}
