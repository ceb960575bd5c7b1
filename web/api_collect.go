package web

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"golang.org/x/time/rate"

	"github.com/leadsignal/leadsignal/internal/capture"
	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// The collect API (docs/capture-js.md): what the site snippet posts from
// a visitor's browser, with a public site key in the query instead of a
// secret ingest key. It answers only pages of the key's allowed origins,
// with CORS for them alone; it takes the visitor's IP address and user
// agent from the request itself, and then captures as POST /api/v1/leads
// does.

// Collect's rate limits, per server: per visitor's IP address, a form
// session posts its config, a partial lead or two and the complete lead;
// per site key, a busy site's visitors together (DefaultCollectKeyRate a
// second, Options.CollectKeyRate), with five seconds' worth at once.
var collectPerIP = middleware.RateLimiterMemoryStoreConfig{Rate: rate.Limit(1), Burst: 30, ExpiresIn: 3 * time.Minute}

// DefaultCollectKeyRate is how many collect requests a second one site
// key may make of one server when Options.CollectKeyRate is 0.
const DefaultCollectKeyRate = 100

// collectLimits are the collect API's rate limiters.
type collectLimits struct {
	ip, key *middleware.RateLimiterMemoryStore
	perIP   middleware.RateLimiterMemoryStoreConfig
	perKey  middleware.RateLimiterMemoryStoreConfig
}

func newCollectLimits(keyRate float64) collectLimits {
	if keyRate <= 0 {
		keyRate = DefaultCollectKeyRate
	}
	perKey := middleware.RateLimiterMemoryStoreConfig{Rate: rate.Limit(keyRate), Burst: int(5 * keyRate), ExpiresIn: 3 * time.Minute}
	return collectLimits{ip: middleware.NewRateLimiterMemoryStoreWithConfig(collectPerIP),
		key: middleware.NewRateLimiterMemoryStoreWithConfig(perKey), perIP: collectPerIP, perKey: perKey}
}

// siteKeyAccount finds the site key of the query's key, and refuses a
// request from an origin it does not allow; nothing it answers carries
// CORS headers, so a page of another origin learns nothing. It sets the
// CORS headers of an allowed origin on the reply.
func (h *Handler) siteKeyAccount(c echo.Context) (models.Account, models.SiteKey, string, error) {
	origin := c.Request().Header.Get(echo.HeaderOrigin)
	acc, key, err := h.store.SiteKeyAccount(c.Request().Context(), c.QueryParam("key"))
	if errors.Is(err, store.ErrNotFound) {
		return acc, key, "", apiFail(c, http.StatusUnauthorized, "invalid_key", "the site key in ?key= is unknown or revoked", "key")
	}
	if err != nil {
		return acc, key, "", err
	}
	c.Response().Header().Add(echo.HeaderVary, echo.HeaderOrigin)
	if !slices.ContainsFunc(key.Origins, func(o models.SiteKeyOrigin) bool { return o.Origin == origin }) {
		return acc, key, "", apiFail(c, http.StatusForbidden, "origin_not_allowed",
			"this site key is not allowed from "+strconv.Quote(name.Cut(origin, 200))+"; allow the origin on the account's Settings → Site snippet", "")
	}
	c.Response().Header().Set(echo.HeaderAccessControlAllowOrigin, origin)
	return acc, key, origin, nil
}

// limitCollect refuses, 429 with Retry-After, a request over the IP's or
// the site key's rate.
func (h *Handler) limitCollect(c echo.Context, key models.SiteKey) error {
	for _, l := range []struct {
		store *middleware.RateLimiterMemoryStore
		id    string
		cfg   middleware.RateLimiterMemoryStoreConfig
		what  string
	}{
		{h.collect.ip, c.RealIP(), h.collect.perIP, "from this address"},
		{h.collect.key, strconv.FormatInt(key.ID, 10), h.collect.perKey, "with this site key"},
	} {
		if ok, _ := l.store.Allow(l.id); !ok {
			c.Response().Header().Set(echo.HeaderRetryAfter, strconv.Itoa(max(1, int(1/float64(l.cfg.Rate)))))
			return apiFail(c, http.StatusTooManyRequests, "rate_limited", "too many requests "+l.what+"; try again in a moment", "")
		}
	}
	return nil
}

// collectPreflight answers a CORS preflight of the collect API: allowed
// for the site key's origins, 403 without CORS headers for the rest.
func (h *Handler) collectPreflight(c echo.Context) error {
	if _, _, _, err := h.siteKeyAccount(c); err != nil || c.Response().Committed {
		return err
	}
	hd := c.Response().Header()
	hd.Set(echo.HeaderAccessControlAllowMethods, "GET, POST")
	hd.Set(echo.HeaderAccessControlAllowHeaders, "Content-Type")
	hd.Set(echo.HeaderAccessControlMaxAge, "600")
	return c.NoContent(http.StatusNoContent)
}

// collectConfig answers the snippet's GET /api/v1/collect/config: the
// Meta pixel ids that a lead's Lead event goes to, so the page fires the
// pixel's Lead with the server event's event id.
func (h *Handler) collectConfig(c echo.Context) error {
	acc, _, _, err := h.siteKeyAccount(c)
	if err != nil || c.Response().Committed {
		return err
	}
	ctx := c.Request().Context()
	rules, err := h.store.SendRules(ctx, acc.ID)
	if err != nil {
		return err
	}
	datasets, err := h.store.Datasets(ctx, acc.ID)
	if err != nil {
		return err
	}
	pixels := []string{}
	for _, d := range datasets {
		sends := d.Of() == models.KindMeta && slices.ContainsFunc(rules, func(r models.SendRule) bool {
			return r.Enabled && r.SendsTo(d.ID) && r.EventName == "Lead" && rule.Mode(r.Mode).OnCapture()
		})
		if sends && !slices.Contains(pixels, d.PixelID) {
			pixels = append(pixels, d.PixelID)
		}
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "private, max-age=300")
	return c.JSON(http.StatusOK, map[string]any{"pixels": pixels, "event_name": "Lead"})
}

// collectLead captures a lead the snippet posts (capture.DecodeCollect),
// as JSON whatever its Content-Type: text/plain spares the page a
// preflight.
func (h *Handler) collectLead(c echo.Context) error {
	acc, key, origin, err := h.siteKeyAccount(c)
	if err != nil || c.Response().Committed {
		return err
	}
	if err := h.limitCollect(c, key); err != nil || c.Response().Committed {
		return err
	}
	v, verr := capture.DecodeCollect(c.Request().Body, c.RealIP(), c.Request().UserAgent(), h.now())
	if verr != nil {
		return apiFail(c, verr.Status, verr.Code, verr.Message, verr.Field)
	}
	res, err := h.capture.Capture(c.Request().Context(), acc, v)
	if err != nil {
		return err
	}
	if err := h.store.NoteSiteKeyOrigin(c.Request().Context(), key, origin, h.now()); err != nil {
		h.log.Warn("note site key origin", "site_key_id", key.ID, "error", err)
	}
	return h.leadReply(c, res)
}
