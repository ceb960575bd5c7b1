package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestPagesRefuseNUL: a NUL character in a form or a query, or bytes that
// are not UTF-8 in a query, are a clear 400 on both databases (Postgres
// cannot store or compare them), and nothing is saved.
func TestPagesRefuseNUL(t *testing.T) {
	t.Parallel()
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
		// Bytes that are not UTF-8: Postgres refuses to compare them.
		for _, path := range []string{base + "?campaign=%FF", base + "/leads?campaign=%FF", base + "/events?campaign=%FF",
			base + "/leads?reached=%C3", base + "?goal=%FF"} {
			wantStatus(t, path, b.get(path), http.StatusBadRequest)
		}
		wantStatus(t, "a long campaign", b.get(base+"?campaign="+strings.Repeat("x", 40_000)), http.StatusOK)
	})
}

// TestPagesRefuseHugeBodies: a page request's body is bounded before the
// session and CSRF checks read it; the largest real one is a setup file.
func TestPagesRefuseHugeBodies(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	ada := a.user("ada@example.com", false)
	acc := a.account("acme", ada)
	b := a.browser()
	b.login(ada.Email)
	huge := url.Values{"name": {strings.Repeat("x", 3<<20)}, "timezone": {"UTC"}, "currency": {"USD"}}
	wantStatus(t, "a 3 MiB settings form", b.post(fmt.Sprintf("/accounts/%d/settings", acc.ID), huge), http.StatusRequestEntityTooLarge)
	wantStatus(t, "a 3 MiB login", a.browser().post("/login", url.Values{"email": {strings.Repeat("a", 3<<20)}}), http.StatusRequestEntityTooLarge)
}
