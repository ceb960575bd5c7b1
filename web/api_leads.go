package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/capture"
	"github.com/leadsignal/leadsignal/internal/junk"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// leadReply is the answer of POST /api/v1/leads.
type leadReply struct {
	LeadID      int64                 `json:"lead_id"`
	Junk        bool                  `json:"junk"`
	JunkReasons []string              `json:"junk_reasons"`
	Partial     bool                  `json:"partial"`
	Outcome     string                `json:"outcome"`
	Events      []capture.QueuedEvent `json:"events"`
}

// apiFail writes the API's error shape (docs/api.md, "Errors").
func apiFail(c echo.Context, status int, code, message, field string) error {
	return c.JSON(status, apiError{Error: apiErrorBody{Code: code, Message: message, Field: field}})
}

// requireIngestKey authenticates an ingest API call by its bearer key and
// loads the key's account.
func (h *Handler) requireIngestKey(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		secret, ok := bearer(c.Request().Header.Get(echo.HeaderAuthorization))
		if !ok {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="leadsignal"`)
			return apiFail(c, http.StatusUnauthorized, "missing_key", "send the account's ingest key as Authorization: Bearer <key>", "")
		}
		acc, keyID, err := h.store.IngestKeyAccount(c.Request().Context(), secret, h.now())
		if errors.Is(err, store.ErrNotFound) {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="leadsignal", error="invalid_token"`)
			return apiFail(c, http.StatusUnauthorized, "invalid_key", "the ingest key is unknown or revoked", "")
		}
		if err != nil {
			return err
		}
		c.Set(ctxAccount, &models.AccountAccess{Account: acc})
		c.Set(ctxIngestKey, keyID)
		return next(c)
	}
}

// bearer reads the credentials of an Authorization header of the Bearer
// scheme, whose name is case-insensitive (RFC 9110, 11.1).
func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}

func (h *Handler) createLead(c echo.Context) error {
	req, derr := capture.Decode(c.Request().Body)
	if derr != nil {
		return apiFail(c, derr.Status, derr.Code, derr.Message, derr.Field)
	}
	v, verr := req.Validate(h.now())
	if verr != nil {
		return apiFail(c, verr.Status, verr.Code, verr.Message, verr.Field)
	}
	res, err := h.capture.Capture(c.Request().Context(), currentAccount(c).Account, v)
	if err != nil {
		return err
	}
	return h.leadReply(c, res)
}

// leadReply answers a captured lead as the leads API does: 201 when it is
// new, else 200.
func (h *Handler) leadReply(c echo.Context, res capture.Result) error {
	reply := leadReply{
		LeadID:      res.Lead.ID,
		Junk:        res.Lead.Junk,
		JunkReasons: signalNames(res.Reasons),
		Partial:     res.Lead.Partial,
		Outcome:     string(res.Outcome),
		Events:      res.Events,
	}
	status := http.StatusOK
	if res.Outcome == capture.Created {
		status = http.StatusCreated
	}
	return c.JSON(status, reply)
}

func signalNames(rs []junk.Reason) []string {
	names := make([]string, 0, len(rs))
	for _, r := range rs {
		names = append(names, string(r.Signal))
	}
	return names
}
