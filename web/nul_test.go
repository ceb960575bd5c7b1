package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestPagesRefuseNUL: a NUL character in a form or a query is a clear 400
// on both databases (Postgres cannot store one), and nothing is saved.
func TestPagesRefuseNUL(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		ada := a.user("ada@example.com", false)
		acc := a.account("acme", ada)
		anon := a.browser()
		anon.get("/login")
		wantStatus(t, "login with NUL", anon.post("/login", url.Values{"email": {"a\x00@example.com"}, "password": {"password123"}}), http.StatusBadRequest)

		b := a.browser()
		b.login(ada.Email)
		base := fmt.Sprintf("/accounts/%d", acc.ID)
		b.get(base + "/settings")
		r := b.post(base+"/settings", url.Values{"name": {"Ac\x00me"}, "timezone": {"UTC"}, "currency": {"USD"}})
		wantStatus(t, "settings with NUL", r, http.StatusBadRequest)
		if got, _ := s.Account(t.Context(), acc.ID); got.Name != "Acme" {
			t.Errorf("account name = %q after a refused save; want Acme", got.Name)
		}
		wantStatus(t, "member with NUL", b.post(base+"/members", url.Values{"email": {"bob\x00@example.com"}, "role": {"viewer"}}), http.StatusBadRequest)
		wantStatus(t, "NUL in a form field's name", b.post(base+"/settings", url.Values{"na\x00me": {"x"}}), http.StatusBadRequest)
		wantStatus(t, "leads search with NUL", b.get(base+"/leads?q=%00x"), http.StatusBadRequest)
		wantStatus(t, "leads search", b.get(base+"/leads?q=x"), http.StatusOK)
	})
}
