// Package web serves leadsignal's pages and JSON APIs with echo.
package web

import (
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/leadsignal/leadsignal/internal/capture"
	"github.com/leadsignal/leadsignal/internal/config"
	"github.com/leadsignal/leadsignal/internal/crmsync"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/destination"
	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/internal/stageupload"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/static"
	"github.com/leadsignal/leadsignal/store"
)

// Options configures the web server.
type Options struct {
	Store *store.Store
	Log   *slog.Logger
	// SessionHashKey and SessionBlockKey sign and encrypt the session
	// cookie; 32 bytes each, derived from LEADSIGNAL_SECRET.
	SessionHashKey  []byte
	SessionBlockKey []byte
	// SessionLimits end idle and old sessions; config's defaults when zero.
	SessionLimits store.SessionLimits
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Box seals and opens the datasets' tokens.
	Box *seal.Box
	// Sender posts test events to Meta, Platforms to the other
	// destinations' platforms; the dispatcher sends the rest.
	Sender    dispatch.Sender
	Platforms map[models.Kind]destination.Sender
	// GraphURL and APIVersion are META_GRAPH_URL and META_API_VERSION.
	GraphURL   string
	APIVersion string
	// Notify wakes the dispatcher after events were queued; may be nil.
	Notify func()
	// Decider decides leads' events and records stage changes, with the
	// rules compiled that capture and the dispatcher share; serve gives
	// the one it builds. When nil the server makes its own (tests).
	Decider *decide.Decider
	// Metrics serves /metrics when set.
	Metrics http.Handler
	// CRM is where the CRMs' APIs are and the public address of the hook
	// URLs (docs/crm.md).
	CRM CRMOptions
	// Uploads stores CSV uploads of stage changes and runs them in the
	// background; serve gives one it runs (stageupload.Runner.Run). When
	// nil the server makes its own, which never stops nor resumes uploads.
	Uploads *stageupload.Runner
	// ClientIPHeader, when set, is the header a proxy in front writes the
	// visitor's address in (LEADSIGNAL_CLIENT_IP_HEADER); the address is
	// read from it alone. Unset, X-Forwarded-For is trusted from private
	// and loopback peers only.
	ClientIPHeader string
	// CollectKeyRate is how many collect requests a second one site key
	// may make (DefaultCollectKeyRate when 0); the bench lifts it to
	// measure the path rather than the limit.
	CollectKeyRate float64
}

// Handler holds what every request handler needs.
type Handler struct {
	store    *store.Store
	log      *slog.Logger
	sessions *sessionStore
	limiter  *limiter
	capture  *capture.Capturer
	decider  *decide.Decider
	now      func() time.Time
	box      *seal.Box
	sender   dispatch.Sender
	// platforms send the other destinations' test events.
	platforms map[models.Kind]destination.Sender
	graphURL  string
	// apiVersion is the Graph API version of datasets that name none.
	apiVersion string
	notify     func()
	uploads    *stageupload.Runner
	crm        CRMOptions
	// hookRefusals counts and logs the CRM deliveries refused.
	hookRefusals *refusals
	// inbox stores the CRMs' deliveries, concurrent ones together.
	inbox *crmsync.Inbox
	// collect limits the collect API's rate per IP and per site key.
	collect collectLimits
}

// maxPageBody bounds a page request's body: twice the largest setup file
// an owner may upload, for the multipart framing.
const maxPageBody = "2M"

// New builds the echo server with every route of the product.
func New(o Options) *echo.Echo {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Decider == nil {
		o.Decider = decide.New(o.Store, nil, o.Notify)
	}
	if o.SessionLimits.Idle <= 0 {
		o.SessionLimits.Idle = config.DefaultSessionIdle
	}
	if o.SessionLimits.Absolute <= 0 {
		o.SessionLimits.Absolute = config.DefaultSessionMax
	}
	h := &Handler{
		store:     o.Store,
		log:       o.Log,
		sessions:  newSessionStore(o.Store, o.SessionHashKey, o.SessionBlockKey, o.SessionLimits, o.Now),
		limiter:   newLimiter(loginLimit, loginWindow, o.Now),
		collect:   newCollectLimits(o.CollectKeyRate),
		capture:   capture.New(o.Store, o.Decider.Matchers, o.Notify),
		decider:   o.Decider,
		now:       o.Now,
		box:       o.Box,
		sender:    o.Sender,
		platforms: o.Platforms,
		graphURL:  o.GraphURL,

		apiVersion: o.APIVersion,
		notify:     o.Notify,
		crm:        o.CRM,
	}
	h.hookRefusals = newRefusals(o.Now)
	h.inbox = crmsync.NewInbox(o.Store, o.CRM.Notify)
	if h.notify == nil {
		h.notify = func() {}
	}
	if h.uploads = o.Uploads; h.uploads == nil {
		h.uploads = stageupload.New(stageupload.Options{Store: o.Store, Decider: o.Decider, Log: o.Log, Now: o.Now})
	}

	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	// Behind a load balancer the visitor's address is in X-Forwarded-For;
	// it is trusted only when the direct peer is a private or loopback
	// address, so a client cannot pick its own rate-limit bucket.
	e.IPExtractor = echo.ExtractIPFromXFFHeader()
	if o.ClientIPHeader != "" {
		e.IPExtractor = clientIPFrom(o.ClientIPHeader)
	}
	e.HTTPErrorHandler = h.handleError

	e.Use(h.accessLog)
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisableStackAll: true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			h.log.Error("panic", slog.String("path", logPath(c.Request().URL.Path)), slog.Any("error", err), slog.String("stack", string(stack)))
			return err
		},
	}))
	// The CSP's base-uri 'none' keeps an injected <base> from moving the
	// pages' relative URLs; form-action 'self' keeps every form, and the
	// redirect after it, on this site.
	e.Use(middleware.SecureWithConfig(middleware.SecureConfig{
		XSSProtection:         "",
		ContentTypeNosniff:    "nosniff",
		XFrameOptions:         "DENY",
		ReferrerPolicy:        "same-origin",
		ContentSecurityPolicy: "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
	}))

	e.GET("/healthz", h.healthz)
	e.GET("/static/*", echo.WrapHandler(static.Handler()))
	e.GET(static.FaviconPath, echo.WrapHandler(static.Favicon()))
	e.GET(static.CapturePath, echo.WrapHandler(static.Capture()))
	if o.Metrics != nil {
		e.GET("/metrics", echo.WrapHandler(o.Metrics))
	}

	// A page's form is small; the largest, a setup file upload, is at most
	// 1 MiB. The limit comes before the CSRF check, which reads the form.
	ui := e.Group("", pageBodyLimit(), h.loadSession, refuseBadText, h.csrf)
	ui.GET("/", h.home)
	ui.GET("/setup", h.showSetup)
	ui.POST("/setup", h.createFirstAdmin)
	ui.GET("/login", h.showLogin)
	ui.POST("/login", h.login)
	ui.POST("/logout", h.logout)
	ui.GET("/set-password", h.showSetPassword)
	ui.POST("/set-password", h.setPassword)

	in := ui.Group("", h.requireUser)
	in.GET("/accounts", h.showAccounts)
	in.GET("/switcher", h.showSwitcher)
	in.POST("/logout/everywhere", h.logoutEverywhere)
	in.GET("/password", h.showPassword)
	in.POST("/password", h.changePassword)

	admin := in.Group("", h.requireAdmin)
	admin.GET("/accounts/new", h.showNewAccount)
	admin.POST("/accounts", h.createAccount)
	admin.GET("/admin/users", h.showUsers)
	admin.POST("/admin/users", h.createUser)
	admin.POST("/admin/users/:user/remove", h.removeUser)
	admin.POST("/admin/users/:user/link", h.createUserLink)
	admin.GET("/admin/settings", h.showServerSettings)
	admin.POST("/admin/settings", h.saveServerSettings)

	// The roles' groups (docs/operations.md, "Roles"): every member reads
	// the Overview and the leads; sales read what editors read and mark
	// stages; editors set the account up; owners also manage members.
	acc := in.Group("/accounts/:account", h.requireAccount)
	acc.GET("", h.showOverview)
	acc.GET("/leads", h.showLeads)
	acc.GET("/leads.csv", h.exportLeads)
	acc.GET("/leads/:lead", h.showLead)

	sales := acc.Group("", h.requireRole(models.RoleSales))
	sales.POST("/leads/:lead/stages", h.addLeadStage)
	sales.GET("/events", h.showEvents)
	sales.GET("/events.csv", h.exportEvents)
	sales.GET("/events/:event", h.showEvent)
	sales.GET("/datasets", h.showDatasets)
	sales.GET("/datasets/:dataset", h.showDataset)

	editor := acc.Group("", h.requireRole(models.RoleEditor))
	editor.POST("/events/:event/retry", h.retryEvent)
	editor.POST("/events/retry", h.retryAllEvents)
	editor.POST("/datasets/:dataset", h.updateDataset)
	editor.POST("/datasets/:dataset/test", h.sendTestEvent)
	editor.POST("/datasets/:dataset/probe", h.probeDataset)
	editor.POST("/leads/:lead/rules/:rule/send", h.sendRuleEvent)
	// Rules and stages: sales read every page editors do (read-only);
	// editors change them.
	h.ruleRoutes(sales, editor)
	h.stageRoutes(sales, editor)
	editor.POST("/stages/sequences", h.createSequence)
	editor.POST("/stages/sequences/:sequence/delete", h.deleteSequence)

	// Settings are setup, an editor's (DESIGN.md, "Roles"); members are
	// the owners' alone.
	editor.GET("/settings", h.showSettings)
	editor.POST("/settings", h.updateSettings)
	editor.GET("/settings/keys", h.showKeys)
	editor.GET("/settings/junk", h.showJunk)
	editor.POST("/keys", h.createKey)
	editor.POST("/keys/:key/revoke", h.revokeKey)
	editor.POST("/junk", h.updateJunk)
	editor.GET("/datasets/new", h.showNewDataset)
	editor.POST("/datasets", h.createDataset)
	h.setupFileRoutes(editor)
	h.siteRoutes(editor)

	owner := acc.Group("", h.requireRole(models.RoleOwner))
	owner.GET("/settings/members", h.showMembers)
	owner.POST("/members", h.addMember)
	owner.POST("/members/:user/role", h.setMemberRole)
	owner.POST("/members/:user/remove", h.removeMember)

	// A group's middleware guards its not-found answer too (echo's
	// Group.Use), and the admin, sales, editor and owner groups share their
	// parents' paths: the parents answer unknown paths again, last, so an
	// unknown page is a 404 for everyone, never "only administrators" or
	// "only editors".
	ui.RouteNotFound("/*", echo.NotFoundHandler)
	acc.RouteNotFound("/*", echo.NotFoundHandler)

	// A CRM's deliveries carry its own authentication, checked over the
	// raw body; no session, no CSRF token.
	hooks := e.Group("/hooks")
	hooks.RouteNotFound("/*", func(c echo.Context) error {
		return apiFail(c, http.StatusNotFound, "not_found", "no CRM connection has this URL", "")
	})
	apiRoute(hooks, "/:kind/:token", http.MethodPost, h.receiveHook)
	// HubSpot's workflow webhooks may be sent by GET; receiveHook refuses
	// a GET to the other kinds.
	hooks.GET("/:kind/:token", h.receiveHook)

	// The JSON API answers JSON at every /api path, and never passes
	// through the pages' session and CSRF checks: a bearer key
	// authenticates each call.
	api := e.Group("/api")
	api.RouteNotFound("", apiNotFound)
	api.RouteNotFound("/*", apiNotFound)
	apiRoute(api, "/v1/leads", http.MethodPost, h.createLead, h.requireIngestKey)
	apiRoute(api, "/v1/stages", http.MethodPost, h.createStage, h.requireIngestKey)
	apiRoute(api, "/v1/stage-uploads", http.MethodPost, h.createUploadByAPI, h.requireIngestKey)
	apiRoute(api, "/v1/stage-uploads/:upload", http.MethodGet, h.showUploadByAPI, h.requireIngestKey)
	apiRoute(api, "/v1/stage-uploads/:upload/apply", http.MethodPost, h.applyUploadByAPI, h.requireIngestKey)
	// The site snippet's API: a public site key in the query, CORS for
	// the key's origins (api_collect.go).
	apiRoute(api, "/v1/collect", http.MethodPost, h.collectLead)
	api.OPTIONS("/v1/collect", h.collectPreflight)
	apiRoute(api, "/v1/collect/config", http.MethodGet, h.collectConfig)
	api.OPTIONS("/v1/collect/config", h.collectPreflight)

	return e
}

func (h *Handler) healthz(c echo.Context) error {
	if err := h.store.Ping(c.Request().Context()); err != nil {
		h.log.Error("health check", slog.Any("error", err))
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "database unavailable"})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// apiRoute registers an API endpoint that takes one method: any other is a
// JSON 405 with Allow (OPTIONS a 204 with Allow), before any key is checked.
func apiRoute(g *echo.Group, path, method string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	allow := method + ", " + http.MethodOptions
	g.Any(path, func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderAllow, allow)
		return echo.NewHTTPError(http.StatusMethodNotAllowed, "this endpoint takes "+method+" only")
	})
	g.Add(method, path, h, m...)
	g.OPTIONS(path, func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderAllow, allow)
		return c.NoContent(http.StatusNoContent)
	})
}

func apiNotFound(c echo.Context) error {
	return echo.NewHTTPError(http.StatusNotFound, "no such API endpoint; leads go to POST /api/v1/leads, stage changes to POST /api/v1/stages")
}

// clientIPFrom reads the visitor's address from header alone, the one a
// proxy in front writes it in (Options.ClientIPHeader); a request without
// an address there is taken as from its direct peer.
func clientIPFrom(header string) echo.IPExtractor {
	direct := echo.ExtractIPDirect()
	return func(r *http.Request) string {
		if ip, err := netip.ParseAddr(strings.TrimSpace(r.Header.Get(header))); err == nil {
			return ip.Unmap().String()
		}
		return direct(r)
	}
}
