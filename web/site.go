package web

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/capture"
	"github.com/leadsignal/leadsignal/internal/site"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// The site snippet's settings section (docs/capture-js.md): the account's
// public site keys with their snippets and allowed origins, and the leads
// the snippet sent in the last hour, for checking an install.

func (h *Handler) siteRoutes(g *echo.Group) {
	g.GET("/settings/site", h.showSite)
	g.GET("/settings/site/arrivals", h.showSiteArrivals)
	g.POST("/site-keys", h.createSiteKey)
	g.POST("/site-keys/:key/origins", h.addSiteOrigin)
	g.POST("/site-keys/:key/origins/remove", h.removeSiteOrigin)
	g.POST("/site-keys/:key/revoke", h.revokeSiteKey)
	g.POST("/site-keys/:key/test-lead", h.sendTestLead)
}

// arrivalsShown is how many of the snippet's newest leads the section
// shows, and arrivalsWindow how far back it looks.
const (
	arrivalsShown  = 5
	arrivalsWindow = time.Hour
)

func newSiteFields() (name, origin views.Field) {
	return views.Field{Name: "name", Label: "Website name", Required: true, Hint: "For you, like “Main website” or “Landing pages”."},
		views.Field{Name: "origin", Label: "Website address", Required: true, Hint: "Where the forms are, like https://www.example.com: the snippet works only on pages of the addresses you allow."}
}

func addOriginField() views.Field {
	return views.Field{Name: "origin", Label: "Allow another address", Hint: "Each scheme and host counts on its own: https://example.com and https://www.example.com are two."}
}

// siteView loads the section: every site key with its snippet, origins
// and their last lead, and the snippet's leads of the last hour.
func (h *Handler) siteView(c echo.Context) (views.SiteView, error) {
	ctx := c.Request().Context()
	a := currentAccount(c).Account
	var v views.SiteView
	v.Name, v.Origin = newSiteFields()
	keys, err := h.store.SiteKeys(ctx, a.ID)
	if err != nil {
		return v, err
	}
	base, err := h.publicURL(ctx)
	if err != nil {
		return v, err
	}
	if base == "" {
		base = requestBase(c)
	}
	for _, k := range keys {
		it := views.SiteKeyItem{ID: k.ID, Name: k.Name, Key: k.Key,
			Snippet:   `<script src="` + base + `/capture.js" data-key="` + k.Key + `" async></script>`,
			Created:   h.formatTime(a, &k.CreatedAt),
			Revoked:   h.formatTime(a, k.RevokedAt),
			AddOrigin: addOriginField()}
		for _, o := range k.Origins {
			it.Origins = append(it.Origins, views.SiteOriginItem{Origin: o.Origin, LastSeen: orNever(h.formatTime(a, o.LastSeenAt))})
		}
		v.Keys = append(v.Keys, it)
	}
	v.Arrivals, err = h.siteArrivals(c)
	return v, err
}

func (h *Handler) siteArrivals(c echo.Context) ([]views.SiteArrival, error) {
	a := currentAccount(c).Account
	now := h.now()
	leads, err := h.store.SnippetLeads(c.Request().Context(), a.ID, now.Add(-arrivalsWindow), arrivalsShown)
	if err != nil {
		return nil, err
	}
	out := make([]views.SiteArrival, 0, len(leads))
	for _, l := range leads {
		name := strings.TrimSpace(l.FirstName + " " + l.LastName)
		for _, alt := range []string{l.Email, l.Phone, "Lead " + strconv.FormatInt(l.ID, 10)} {
			if name == "" {
				name = alt
			}
		}
		out = append(out, views.SiteArrival{URL: views.AccountURL(a.ID, "/leads/"+strconv.FormatInt(l.ID, 10)), Name: name,
			Page: l.EventSourceURL, When: views.NewStamp(l.CreatedAt, now, location(a)), Partial: l.Partial, Test: l.Test})
	}
	return out, nil
}

func (h *Handler) renderSite(c echo.Context, status int, v views.SiteView) error {
	return render(c, status, views.SitePage(h.settingsPage(c, "Site snippet"), v))
}

func (h *Handler) showSite(c echo.Context) error {
	v, err := h.siteView(c)
	if err != nil {
		return err
	}
	return h.renderSite(c, http.StatusOK, v)
}

// showSiteArrivals is the section's list of the snippet's leads, which the
// page asks for again every few seconds.
func (h *Handler) showSiteArrivals(c echo.Context) error {
	leads, err := h.siteArrivals(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.SiteArrivals(fragmentPage(c), leads))
}

func (h *Handler) createSiteKey(c echo.Context) error {
	a := currentAccount(c).Account
	name := strings.TrimSpace(c.FormValue("name"))
	nameErr := validName(name)
	origin, err := site.ParseOrigin(c.FormValue("origin"))
	if nameErr != "" || err != nil {
		v, verr := h.siteView(c)
		if verr != nil {
			return verr
		}
		v.Name.Value, v.Name.Error = name, nameErr
		v.Origin.Value = c.FormValue("origin")
		if err != nil {
			v.Origin.Error = err.Error()
		}
		return h.renderSite(c, http.StatusUnprocessableEntity, v)
	}
	k, err := h.store.CreateSiteKey(c.Request().Context(), a.ID, name, []string{origin}, h.now())
	if errors.Is(err, store.ErrSiteKeyLimit) {
		setFlash(c, "error", "The account has the most site keys it may have: revoke one to add another.")
		return c.Redirect(http.StatusSeeOther, views.SettingsURL(a.ID, views.SettingsSite))
	}
	if err != nil {
		return err
	}
	h.log.Info("site key created", "account_id", a.ID, "site_key_id", k.ID)
	setFlash(c, "ok", "Site key created: paste its snippet into your website's pages.")
	return c.Redirect(http.StatusSeeOther, views.SettingsURL(a.ID, views.SettingsSite)+"#site-key-"+strconv.FormatInt(k.ID, 10))
}

// siteKeyParam is the id of the account's site key named in the URL;
// ErrNotFound (404) for another account's.
func (h *Handler) siteKeyParam(c echo.Context) (models.SiteKey, error) {
	id, err := strconv.ParseInt(c.Param("key"), 10, 64)
	if err != nil {
		return models.SiteKey{}, store.ErrNotFound
	}
	return h.store.SiteKey(c.Request().Context(), currentAccount(c).ID, id)
}

func (h *Handler) addSiteOrigin(c echo.Context) error {
	a := currentAccount(c).Account
	k, err := h.siteKeyParam(c)
	if err != nil {
		return err
	}
	origin, perr := site.ParseOrigin(c.FormValue("origin"))
	if perr == nil {
		err = h.store.AddSiteKeyOrigin(c.Request().Context(), a.ID, k.ID, origin, h.now())
		switch {
		case errors.Is(err, store.ErrConflict):
			perr = errors.New(origin + " is allowed already")
		case errors.Is(err, store.ErrSiteKeyOrigins):
			perr = errors.New("a site key may have " + strconv.Itoa(site.MaxOrigins) + " origins: remove one first")
		case err != nil:
			return err
		}
	}
	if perr != nil {
		v, err := h.siteView(c)
		if err != nil {
			return err
		}
		for i := range v.Keys {
			if v.Keys[i].ID == k.ID {
				v.Keys[i].AddOrigin.Value, v.Keys[i].AddOrigin.Error = c.FormValue("origin"), perr.Error()
			}
		}
		return h.renderSite(c, http.StatusUnprocessableEntity, v)
	}
	setFlash(c, "ok", origin+" may now send leads with "+k.Name+"’s snippet.")
	return c.Redirect(http.StatusSeeOther, views.SettingsURL(a.ID, views.SettingsSite)+"#site-key-"+strconv.FormatInt(k.ID, 10))
}

func (h *Handler) removeSiteOrigin(c echo.Context) error {
	a := currentAccount(c).Account
	k, err := h.siteKeyParam(c)
	if err != nil {
		return err
	}
	origin := c.FormValue("origin")
	if err := h.store.RemoveSiteKeyOrigin(c.Request().Context(), a.ID, k.ID, origin); err != nil {
		return err
	}
	setFlash(c, "ok", origin+" no longer sends leads with "+k.Name+"’s snippet.")
	return c.Redirect(http.StatusSeeOther, views.SettingsURL(a.ID, views.SettingsSite)+"#site-key-"+strconv.FormatInt(k.ID, 10))
}

func (h *Handler) revokeSiteKey(c echo.Context) error {
	a := currentAccount(c).Account
	k, err := h.siteKeyParam(c)
	if err != nil {
		return err
	}
	if err := h.store.RevokeSiteKey(c.Request().Context(), a.ID, k.ID, h.now()); err != nil {
		return err
	}
	setFlash(c, "ok", "Site key revoked: pages with its snippet send nothing now.")
	return c.Redirect(http.StatusSeeOther, views.SettingsURL(a.ID, views.SettingsSite))
}

// sendTestLead captures a test lead as the key's snippet would post it
// from the key's first origin, by the collect API's own path, with the
// person's own address and browser: the lead shows under "Check the
// install" with the events a real lead would make, none of which goes to
// Meta (models.Lead.Test).
func (h *Handler) sendTestLead(c echo.Context) error {
	a := currentAccount(c).Account
	k, err := h.siteKeyParam(c)
	if err != nil {
		return err
	}
	back := views.SettingsURL(a.ID, views.SettingsSite)
	if k.RevokedAt != nil || len(k.Origins) == 0 {
		setFlash(c, "error", "A revoked site key, or one without an allowed origin, sends no leads: there is nothing to test.")
		return c.Redirect(http.StatusSeeOther, back)
	}
	origin := k.Origins[0].Origin
	var random [16]byte
	rand.Read(random[:])
	body, err := json.Marshal(map[string]any{
		"external_id": "ls_" + hex.EncodeToString(random[:]),
		"email":       "test-lead-" + strings.ToLower(rand.Text()[:6]) + "@" + testLeadDomain(origin),
		"first_name":  "Test", "last_name": "Lead",
		"event_source_url": origin + "/",
	})
	if err != nil {
		return err
	}
	v, verr := capture.DecodeCollect(bytes.NewReader(body), c.RealIP(), c.Request().UserAgent(), h.now())
	if verr != nil {
		return fmt.Errorf("test lead: %s", verr.Message)
	}
	v.Test = true
	res, err := h.capture.Capture(c.Request().Context(), a, v)
	if err != nil {
		return err
	}
	h.log.Info("test lead sent", "account_id", a.ID, "site_key_id", k.ID, "lead_id", res.Lead.ID)
	setFlash(c, "ok", testLeadNews(res))
	return c.Redirect(http.StatusSeeOther, back+"#site-arrivals")
}

// testLeadDomain is the test lead's email domain: the origin's, without
// "www.", or example.com for an address or a name without a dot.
func testLeadDomain(origin string) string {
	host := strings.TrimPrefix(origin[strings.Index(origin, "//")+2:], "www.")
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host, "]") {
		host = host[:i]
	}
	if !strings.Contains(host, ".") || net.ParseIP(strings.Trim(host, "[]")) != nil {
		return "example.com"
	}
	return host
}

// testLeadNews says what the test lead became: the events a real lead
// would have sent, none of which did.
func testLeadNews(res capture.Result) string {
	msg := "Test lead sent: it shows under “Check the install” below."
	if len(res.Events) == 0 {
		return msg + " No rule makes an event of it, so a lead like it would send nothing to Meta."
	}
	var evs []string
	for _, e := range res.Events {
		evs = append(evs, e.EventName+" to "+e.Dataset)
	}
	return msg + " A real lead like it would send " + strings.Join(evs, ", ") + "; a test lead's events never go to Meta."
}
