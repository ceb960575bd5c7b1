package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// crmRoutes adds the CRM connections' pages, the Stages page's CRM section
// (docs/crm.md): a connection's page and its deliveries' bodies to reads
// (sales read them, without the hook URL), the rest to g (editors).
// Viewers neither see nor change connections.
func (h *Handler) crmRoutes(reads, g *echo.Group) {
	reads.GET("/stages/crm/:connection", h.showCRMConnection)
	reads.GET("/stages/crm/:connection/deliveries/:delivery/body", h.showCRMDeliveryBody)
	g.GET("/stages/crm/new", h.showNewCRMConnection)
	g.POST("/stages/crm", h.createCRMConnection)
	g.GET("/stages/crm/:connection/edit", h.showEditCRMConnection)
	g.POST("/stages/crm/:connection", h.updateCRMConnection)
	g.POST("/stages/crm/:connection/delete", h.deleteCRMConnection)
	g.POST("/stages/crm/:connection/stages", h.mapCRMStages)
	g.POST("/stages/crm/:connection/stages/load", h.loadCRMStages)
	g.POST("/stages/crm/:connection/deliveries/:delivery/retry", h.retryCRMDelivery)
}

// foldedBody is how much of a delivery's body its connection's page shows,
// as readable JSON: its first foldedBodySize bytes.
const foldedBodySize = 2048

// foldBody is a delivery's body as its connection's page shows it: whole
// when it is short, else its first foldedBodySize bytes, cut at a
// character, and the link to the whole (showCRMDeliveryBody).
func foldBody(accountID, connectionID int64, d models.CRMDelivery) (shown, whole string) {
	shown = readableJSON([]byte(d.Body))
	if len(shown) <= foldedBodySize {
		return shown, ""
	}
	cut := foldedBodySize
	for cut > 0 && !utf8.RuneStart(shown[cut]) {
		cut--
	}
	return shown[:cut] + "\n…", crmURL(accountID, connectionID, "/deliveries/"+strconv.FormatInt(d.ID, 10)+"/body")
}

// showCRMDeliveryBody serves one of the connection's deliveries' body
// whole, as it was stored, as text: the page shows its first 2 KB. Another
// account's delivery, or another connection's, is 404.
func (h *Handler) showCRMDeliveryBody(c echo.Context) error {
	conn, err := h.crmConnectionParam(c)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(c.Param("delivery"), 10, 64)
	if err != nil {
		return store.ErrNotFound
	}
	d, err := h.store.CRMDelivery(c.Request().Context(), conn.AccountID, id)
	if err != nil {
		return err
	}
	if d.ConnectionID != conn.ID {
		return store.ErrNotFound
	}
	// A CRM wrote it: text that no browser renders as a page.
	c.Response().Header().Set("X-Content-Type-Options", "nosniff")
	c.Response().Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	return c.Blob(http.StatusOK, "text/plain; charset=utf-8", []byte(d.Body))
}

// signInsLine is the connection's page's warning of deliveries that failed
// authentication in the last hour, as this process saw them; "" when none
// did.
func (h *Handler) signInsLine(conn models.CRMConnection, loc *time.Location) string {
	s := h.hookRefusals.lastHour(conn.ID)
	if s.Failed+s.Throttled == 0 {
		return ""
	}
	line := views.Plural(int64(s.Failed), "failed sign-in", "failed sign-ins") + " in the last hour, last at " +
		s.Last.In(loc).Format("15:04:05")
	if s.Throttled > 0 {
		line += fmt.Sprintf("; %s refused unchecked (over %d failed in a minute)",
			views.Plural(int64(s.Throttled), "more delivery", "more deliveries"), hookFailLimit)
	}
	return line + ". A sender with a wrong secret, or someone guessing it: check the secret saved in " + crm.Kind(conn.Kind).Title() + "."
}

// crmURL is the path of one of the account's connection pages; rest is
// appended ("", "/edit", "#deliveries").
func crmURL(accountID, connectionID int64, rest string) string {
	return views.AccountURL(accountID, "/stages/crm/"+strconv.FormatInt(connectionID, 10)+rest)
}

// crmCard is the Stages page's CRM connections card: each connection with
// its last delivery and what waits or was given up.
func (h *Handler) crmCard(c echo.Context) (views.CRMCardView, error) {
	ctx := c.Request().Context()
	a := currentAccount(c).Account
	v := views.CRMCardView{Max: store.MaxCRMConnections}
	conns, err := h.store.CRMConnections(ctx, a.ID)
	if err != nil {
		return v, err
	}
	counts, err := h.store.CRMDeliveryCounts(ctx, a.ID)
	if err != nil {
		return v, err
	}
	now, loc := h.now(), location(a)
	for _, conn := range conns {
		n := counts[conn.ID]
		it := views.CRMConnectionItem{ID: conn.ID, Kind: conn.Kind, KindTitle: crm.Kind(conn.Kind).Title(), Name: conn.Name}
		if n.Last != nil {
			it.Last = views.NewStamp(*n.Last, now, loc)
		}
		if n.Waiting > 0 {
			it.Waiting = views.Plural(int64(n.Waiting), "waiting", "waiting")
		}
		if n.GaveUp > 0 {
			it.GaveUp = views.Plural(int64(n.GaveUp), "given up", "given up")
		}
		v.Items = append(v.Items, it)
	}
	v.Full = len(conns) >= store.MaxCRMConnections
	for _, k := range crm.Kinds {
		v.Kinds = append(v.Kinds, views.Option{Value: string(k), Label: k.Title()})
	}
	return v, nil
}

// crmConnectionParam is the account's connection named in the URL:
// ErrNotFound (404) for another account's.
func (h *Handler) crmConnectionParam(c echo.Context) (models.CRMConnection, error) {
	id, err := strconv.ParseInt(c.Param("connection"), 10, 64)
	if err != nil {
		return models.CRMConnection{}, store.ErrNotFound
	}
	return h.store.CRMConnection(c.Request().Context(), currentAccount(c).ID, id)
}

// keyNewCRMSecret keeps a generated secret in the session for the
// connection page to show once.
const keyNewCRMSecret = "new_crm_secret"

// showCRMConnection is a connection's page: its URL and how to set it up,
// its stage table, its latest deliveries (older ones with ?before=<id>).
// Right after it was created with a generated secret, it shows the secret
// once.
func (h *Handler) showCRMConnection(c echo.Context) error {
	conn, err := h.crmConnectionParam(c)
	if err != nil {
		return err
	}
	before, _ := strconv.ParseInt(c.QueryParam("before"), 10, 64)
	v, err := h.crmPageView(c, conn, max(before, 0))
	if err != nil {
		return err
	}
	if s, ok := h.takeSecret(c, keyNewCRMSecret); ok {
		if id, secret, _ := cutSecret(s); id == conn.ID {
			v.NewSecret = secret
		}
	}
	return h.renderCRMPage(c, http.StatusOK, v)
}

// cutSecret splits what keepSecret kept for a new connection: its id and
// its generated secret.
func cutSecret(s string) (int64, string, bool) {
	idText, secret, ok := strings.Cut(s, "\x00")
	id, err := strconv.ParseInt(idText, 10, 64)
	return id, secret, ok && err == nil
}

func (h *Handler) renderCRMPage(c echo.Context, status int, v views.CRMPage) error {
	p := h.page(c, v.Name)
	p.Nav = "stages"
	return render(c, status, views.CRMConnectionPage(p, v))
}

// secretState says how a connection holds a secret, never what it is:
// saved on the page, read from an environment variable by a setup file, or
// not set.
func secretState(sealed, env string) string {
	switch {
	case env != "" && sealed != "":
		return "from $" + env + " (setup file)"
	case env != "":
		return "not set: $" + env + " was not set when the setup file was applied"
	case sealed != "":
		return "saved"
	}
	return "not set"
}

// crmAlerts are the banners of an account's stuck CRM connections, for its
// editors and owners (viewers cannot open a connection): deliveries that
// wait for a stage mapping, or for a CRM whose API failed them several
// times. Without the banner a sales team would not know that "won in
// HubSpot" is reaching nobody.
func (h *Handler) crmAlerts(c echo.Context, a models.Account) []views.Alert {
	if acc := currentAccount(c); acc == nil || !acc.Role.AtLeast(models.RoleEditor) {
		return nil
	}
	stuck, err := h.store.StuckCRMConnections(c.Request().Context(), []int64{a.ID})
	if err != nil {
		h.log.Error("stuck crm connections", "error", err)
		return nil
	}
	var out []views.Alert
	for _, s := range stuck {
		title := crm.Kind(s.Kind).Title()
		page := crmURL(a.ID, s.ConnectionID, "")
		if s.Mapping > 0 {
			out = append(out, views.Alert{Link: page + "#crm-stages", LinkText: "Map its stages",
				Message: fmt.Sprintf("%s connection %s: %s for a stage mapping; their stage changes reach nobody until then.",
					title, s.Name, views.Plural(int64(s.Mapping), "delivery waits", "deliveries wait"))})
		}
		if s.Attention > 0 {
			out = append(out, views.Alert{Link: page + "#deliveries", LinkText: "See why",
				Message: fmt.Sprintf("%s connection %s: %s attention: what it sent cannot become a stage change as it is.",
					title, s.Name, views.Plural(int64(s.Attention), "delivery needs", "deliveries need"))})
		}
		if s.CRM > 0 {
			out = append(out, views.Alert{Link: page + "#deliveries", LinkText: "See why",
				Message: fmt.Sprintf("%s connection %s: %s because the %s API keeps failing them.",
					title, s.Name, views.Plural(int64(s.CRM), "delivery waits", "deliveries wait"), title)})
		}
	}
	return out
}

// stuckText is the agency overview's line for a stuck connection.
func stuckText(s store.StuckCRM) string {
	var parts []string
	if s.Mapping > 0 {
		parts = append(parts, views.Plural(int64(s.Mapping), "delivery waits", "deliveries wait")+" for a stage mapping")
	}
	if s.Attention > 0 {
		parts = append(parts, views.Plural(int64(s.Attention), "delivery needs", "deliveries need")+" attention")
	}
	if s.CRM > 0 {
		parts = append(parts, views.Plural(int64(s.CRM), "delivery waits", "deliveries wait")+" for a failing API")
	}
	return crm.Kind(s.Kind).Title() + " " + s.Name + ": " + strings.Join(parts, "; ")
}
