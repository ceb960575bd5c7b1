package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/internal/crmsync"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// CRMOptions are the settings of the CRM connections: their APIs' base
// URLs (HUBSPOT_API_URL, PIPEDRIVE_API_URL) and the public address hook
// URLs are made absolute with when LEADSIGNAL_PUBLIC_URL sets it (else an
// administrator's, store.PublicURL).
type CRMOptions struct {
	HubSpotAPIURL   string
	PipedriveAPIURL string
	PublicURL       string
	// Notify wakes the worker after deliveries were stored or a stage
	// mapped; may be nil.
	Notify func()
}

// publicURL is the address hook URLs are made with: LEADSIGNAL_PUBLIC_URL
// when it is set, else the one an administrator saved; "" when neither is.
func (h *Handler) publicURL(ctx context.Context) (string, error) {
	return h.store.PublicURL(ctx, h.crm.PublicURL)
}

// hookURL is the URL a connection's CRM posts to, absolute with the public
// address. While none is set it is made with the address the request came
// to, the one the person's browser uses, and guessed says so: behind a
// proxy the server cannot know the address a CRM reaches it at.
func (h *Handler) hookURL(c echo.Context, conn models.CRMConnection) (url string, guessed bool, err error) {
	base, err := h.publicURL(c.Request().Context())
	if err != nil {
		return "", false, err
	}
	if base == "" {
		base, guessed = requestBase(c), true
	}
	return base + crm.HookPath(conn.Kind, conn.Token), guessed, nil
}

// requestBase is the scheme and host a request came to.
func requestBase(c echo.Context) string {
	return c.Scheme() + "://" + c.Request().Host
}

// maxHookBody bounds a delivery: HubSpot sends up to 100 events, a few
// hundred bytes each.
const maxHookBody = 1 << 20

// inboxFullRetry is the Retry-After, in seconds, of a delivery refused
// because its connection's inbox is full.
const inboxFullRetry = 60

// maxHookToken bounds the token part of a hook URL that is looked up.
const maxHookToken = 100

// hookReply is the answer to a good delivery.
type hookReply struct {
	// Received counts the stage changes the delivery carried, Stored
	// those new to the inbox (the rest were retries or duplicates),
	// Ignored its events that are not stage changes.
	Received int `json:"received"`
	Stored   int `json:"stored"`
	Ignored  int `json:"ignored"`
	// Attention counts the changes received that cannot become stage
	// changes as sent (crm.Change.Problem): stored, and shown on the
	// connection's page with why.
	Attention int `json:"needs_attention"`
}

// receiveHook takes a CRM's delivery (docs/crm.md): it authenticates it
// over the raw body, stores each stage change it carries in the inbox
// (crmsync.Inbox), and answers at once; the worker (internal/crmsync) does
// the rest.
func (h *Handler) receiveHook(c echo.Context) error {
	kind, token := crm.Kind(c.Param("kind")), c.Param("token")
	if !kind.Valid() || token == "" || len(token) > maxHookToken {
		return apiFail(c, http.StatusNotFound, "not_found", "no CRM connection has this URL", "")
	}
	get := c.Request().Method == http.MethodGet
	if get && kind != crm.HubSpot {
		c.Response().Header().Set(echo.HeaderAllow, "POST, OPTIONS")
		return apiFail(c, http.StatusMethodNotAllowed, "method_not_allowed", "this endpoint takes POST only", "")
	}
	ctx := c.Request().Context()
	conn, err := h.store.CRMConnectionByToken(ctx, string(kind), token)
	if errors.Is(err, store.ErrNotFound) {
		return apiFail(c, http.StatusNotFound, "not_found", "no CRM connection has this URL", "")
	}
	if err != nil {
		return err
	}
	if wait := h.hookRefusals.throttle(conn); wait > 0 {
		// Refused before the body is read or the secret opened: a
		// guesser's posts cost a map look-up each.
		c.Response().Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
		return apiFail(c, http.StatusTooManyRequests, "too_many_failures",
			fmt.Sprintf("more than %d deliveries to this connection failed authentication in the last minute: try again later", hookFailLimit), "")
	}
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, maxHookBody+1))
	if err != nil {
		return apiFail(c, http.StatusBadRequest, "unreadable_body", "the body could not be read", "")
	}
	if len(body) > maxHookBody {
		return apiFail(c, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("a delivery is at most %d bytes", maxHookBody), "")
	}
	if conn.SecretSealed == "" {
		msg := "the connection has no secret saved: save it on the connection's page"
		if conn.SecretEnv != "" {
			msg = fmt.Sprintf("the connection's secret is not set: set %s and apply the setup file again", conn.SecretEnv)
		}
		h.hookRefusals.note(h.log, conn, "no secret")
		return apiFail(c, http.StatusServiceUnavailable, "secret_missing", msg, "")
	}
	secret, err := h.box.Open(conn.SecretSealed, crm.SecretLabel(conn.Token))
	if err != nil {
		h.hookRefusals.note(h.log, conn, "the stored secret does not open (LEADSIGNAL_SECRET changed?)")
		return apiFail(c, http.StatusServiceUnavailable, "secret_unreadable",
			"the connection's secret cannot be read: save it again on the connection's page", "")
	}
	called, err := h.calledURL(c)
	if err != nil {
		return err
	}
	req := crm.Request{Method: c.Request().Method, URL: called, Header: c.Request().Header, Body: body}
	if err := crm.Verify(kind, secret, req, h.now()); err != nil {
		h.hookRefusals.failed(conn)
		h.hookRefusals.note(h.log, conn, err.Error())
		return apiFail(c, http.StatusUnauthorized, "unauthorized", "the delivery's signature or credentials are not the connection's", "")
	}
	var fields map[string]string
	if kind == crm.Generic {
		fields, _ = crm.StoredFields(conn.Fields)
	}
	if get {
		// A HubSpot workflow's webhook sent by GET carries the deal's
		// chosen properties in the query, signed (v2) with an empty body.
		if body, err = queryRecord(c.QueryParams()); err != nil {
			return apiFail(c, http.StatusBadRequest, "invalid_query", err.Error(), "")
		}
	}
	if !utf8.Valid(body) {
		return apiFail(c, http.StatusBadRequest, "invalid_body", "the body is not UTF-8", "")
	}
	// Only a body that is not JSON is refused: one that cannot become a
	// stage change is stored all the same, needing attention.
	changes, ignored, err := crm.Parse(kind, body, fields)
	if err != nil {
		return apiFail(c, http.StatusBadRequest, "invalid_body", err.Error(), "")
	}
	stored, err := h.inbox.Add(conn, changes, h.now())
	var big *crmsync.TooLargeError
	switch {
	case errors.As(err, &big):
		return apiFail(c, http.StatusRequestEntityTooLarge, "change_too_large", big.Error(), "")
	case errors.Is(err, store.ErrInboxFull):
		// HubSpot and Pipedrive retry a 429; the worker meanwhile
		// works or gives up what waits.
		c.Response().Header().Set("Retry-After", strconv.Itoa(inboxFullRetry))
		return apiFail(c, http.StatusTooManyRequests, "inbox_full",
			fmt.Sprintf("the connection holds %d deliveries waiting to be processed, the most it may: nothing was stored; try again later", store.MaxWaitingCRMDeliveries), "")
	case err != nil:
		return err
	}
	reply := hookReply{Received: len(changes), Stored: stored, Ignored: ignored}
	for _, ch := range changes {
		if ch.Problem != "" {
			reply.Attention++
		}
	}
	return c.JSON(http.StatusOK, reply)
}

// calledURL is the URL the CRM called, as HubSpot signs it: the public
// address when one is set (behind a proxy the request's own host and
// scheme are the proxy's), else the scheme and host of the request, which
// is what a hook URL shown while none was set is made with.
func (h *Handler) calledURL(c echo.Context) (string, error) {
	r := c.Request()
	base, err := h.publicURL(r.Context())
	if err != nil {
		return "", err
	}
	if base == "" {
		base = requestBase(c)
	}
	return base + r.RequestURI, nil
}

// crmNotify wakes the CRM worker.
func (h *Handler) crmNotify() {
	if h.crm.Notify != nil {
		h.crm.Notify()
	}
}

// logPath is a request path as the log shows it: a hook URL's token cut to
// its first 6 characters, enough to tell connections apart, too few to
// post to one.
func logPath(p string) string {
	rest, ok := strings.CutPrefix(p, "/hooks/")
	if !ok {
		return p
	}
	kind, token, ok := strings.Cut(rest, "/")
	if !ok || len(token) <= 6 {
		return p
	}
	return "/hooks/" + kind + "/" + token[:6] + "…"
}

// queryRecord is a GET delivery's query as the JSON object a POST would
// carry: each parameter's first value, by its name.
func queryRecord(q url.Values) ([]byte, error) {
	rec := make(map[string]string, len(q))
	for k, vs := range q {
		if len(vs) > 0 {
			rec[k] = vs[0]
		}
	}
	if len(rec) == 0 {
		return nil, errors.New("a GET delivery carries the deal's properties in its query; this one has none")
	}
	return json.Marshal(rec)
}
