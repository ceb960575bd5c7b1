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

// keysView loads the account's ingest keys, with an empty form.
func (h *Handler) keysView(c echo.Context) (views.KeysView, error) {
	a := currentAccount(c)
	keys, err := h.store.IngestKeys(c.Request().Context(), a.ID)
	if err != nil {
		return views.KeysView{}, err
	}
	v := views.KeysView{KeyName: newKeyField()}
	for _, k := range keys {
		v.Keys = append(v.Keys, views.KeyItem{
			ID: k.ID, Name: k.Name, Prefix: k.Prefix,
			Created:  h.formatTime(a.Account, &k.CreatedAt),
			LastUsed: orNever(h.formatTime(a.Account, k.LastUsedAt)),
			Revoked:  h.formatTime(a.Account, k.RevokedAt),
		})
	}
	return v, nil
}

func (h *Handler) renderKeys(c echo.Context, status int, v views.KeysView) error {
	return render(c, status, views.KeysPage(h.settingsPage(c, "Ingest keys"), v))
}

// showKeys is the settings' ingest keys section; right after a key was
// created it shows its secret, once.
func (h *Handler) showKeys(c echo.Context) error {
	v, err := h.keysView(c)
	if err != nil {
		return err
	}
	if nk, ok := h.takeSecret(c, keyNewKey); ok {
		v.NewKeyName, v.NewKey, _ = strings.Cut(nk, "\x00")
	}
	return h.renderKeys(c, http.StatusOK, v)
}

func (h *Handler) createKey(c echo.Context) error {
	a := currentAccount(c)
	name := strings.TrimSpace(c.FormValue("key_name"))
	if msg := validName(name); msg != "" {
		v, err := h.keysView(c)
		if err != nil {
			return err
		}
		v.KeyName.Value, v.KeyName.Error = name, msg
		return h.renderKeys(c, http.StatusUnprocessableEntity, v)
	}
	k, secret, err := h.store.CreateIngestKey(c.Request().Context(), a.ID, name)
	if err != nil {
		return err
	}
	h.log.Info("ingest key created", "account_id", a.ID, "key_id", k.ID, "key_prefix", k.Prefix)
	// The secret is not stored: the keys page shows it once.
	if err := h.keepSecret(c, keyNewKey, k.Name+"\x00"+secret); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, views.SettingsURL(a.ID, views.SettingsKeys))
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
	return c.Redirect(http.StatusSeeOther, views.SettingsURL(a.ID, views.SettingsKeys))
}

func orNever(s string) string {
	if s == "" {
		return "never"
	}
	return s
}
