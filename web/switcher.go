package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/views"
)

// showSwitcher is the account switcher's list of the user's accounts,
// which a page loads when its switcher opens (views.SwitcherItems). nav
// is the section the page shows, which each link keeps (an unknown one is
// the Overview's); account is the account the page shows, marked as the
// current one when it is the user's. A visit without htmx goes to the
// list of all accounts.
func (h *Handler) showSwitcher(c echo.Context) error {
	if !isHTMX(c) {
		// Not the switcher asking: a person who opened the address.
		return c.Redirect(http.StatusSeeOther, "/accounts")
	}
	p := views.Page{User: currentUser(c), Nav: c.QueryParam("nav")}
	as, err := h.store.AccountsForUser(c.Request().Context(), p.User.ID)
	if err != nil {
		return err
	}
	p.Accounts = as
	if id, err := strconv.ParseInt(c.QueryParam("account"), 10, 64); err == nil {
		for i := range as {
			if as[i].ID == id {
				p.Account = &as[i]
			}
		}
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return render(c, 200, views.SwitcherItems(p))
}
