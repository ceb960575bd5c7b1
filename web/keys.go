package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

func newKeyField() views.Field {
	return views.Field{Name: "key_name", Label: "New key name", Required: true, Hint: "Where the key is used, e.g. “Website contact form” or “HubSpot”."}
}

func (h *Handler) createKey(c echo.Context) error {
	a := currentAccount(c)
	name := strings.TrimSpace(c.FormValue("key_name"))
	if msg := validName(name); msg != "" {
		v, err := h.settingsView(c)
		if err != nil {
			return err
		}
		v.KeyName.Value, v.KeyName.Error = name, msg
		return h.renderSettings(c, http.StatusUnprocessableEntity, v)
	}
	k, secret, err := h.store.CreateIngestKey(c.Request().Context(), a.ID, name)
	if err != nil {
		return err
	}
	h.log.Info("ingest key created", "account_id", a.ID, "key_id", k.ID, "key_prefix", k.Prefix)
	// The secret is not stored. It rides once in the encrypted session
	// cookie to the settings page, which shows it and forgets it, so a
	// reload neither shows it again nor creates another key.
	session(c).Values[keyNewKey] = k.Name + "\x00" + secret
	if err := saveSession(c); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/settings#keys"))
}

func (h *Handler) revokeKey(c echo.Context) error {
	a := currentAccount(c)
	id, err := strconv.ParseInt(c.Param("key"), 10, 64)
	if err != nil {
		return store.ErrNotFound
	}
	if err := h.store.RevokeIngestKey(c.Request().Context(), a.ID, id, h.now()); err != nil {
		return err
	}
	setFlash(c, "ok", "Key revoked: requests with it now answer 401.")
	return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/settings#keys"))
}
