package web

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// apiError is the JSON error shape of every /api answer.
type apiError struct {
	Error apiErrorBody `json:"error"`
}

type apiErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// handleError is echo's one error handler: store.ErrNotFound is a 404,
// an *echo.HTTPError keeps its code, anything else is logged and a 500.
func (h *Handler) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		// Too late for an error page (a CSV export failing mid-stream):
		// the client gets a cut response, and the log says why.
		h.log.Error("request failed after the response began", slog.String("path", logPath(c.Request().URL.Path)), slog.Any("error", err))
		return
	}
	code := http.StatusInternalServerError
	msg := http.StatusText(code)
	var he *echo.HTTPError
	switch {
	case errors.Is(err, store.ErrNotFound):
		code, msg = http.StatusNotFound, "Not found"
	case errors.As(err, &he):
		code = he.Code
		if m, ok := he.Message.(string); ok && m != "" && code < 500 {
			msg = m
		} else {
			msg = http.StatusText(code)
		}
	}
	if code >= 500 {
		h.log.Error("request failed", slog.String("method", c.Request().Method),
			slog.String("path", logPath(c.Request().URL.Path)), slog.Any("error", err))
	}

	if p := c.Request().URL.Path; p == "/api" || strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/hooks/") {
		_ = c.JSON(code, apiError{Error: apiErrorBody{Code: strings.ReplaceAll(strings.ToLower(http.StatusText(code)), " ", "_"), Message: msg}})
		return
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(code)
		return
	}
	p := h.page(c, http.StatusText(code))
	if rerr := render(c, code, views.ErrorPage(p, code, msg)); rerr != nil {
		h.log.Error("render error page", slog.Any("error", rerr))
		_ = c.String(code, msg)
	}
}

// refuseBadText answers 400 to a page request whose query or form holds a NUL
// character, or whose query holds bytes that are not UTF-8: no text field
// takes them, and Postgres can neither store nor compare them.
func refuseBadText(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		vals := []url.Values{c.QueryParams()}
		if c.Request().Method == http.MethodPost {
			form, err := c.FormParams()
			if err != nil {
				return echo.NewHTTPError(http.StatusBadRequest, "The form could not be read.")
			}
			vals = append(vals, form)
		}
		for _, vs := range vals {
			for k, v := range vs {
				if strings.ContainsRune(k, 0) || slices.ContainsFunc(v, func(s string) bool { return strings.ContainsRune(s, 0) }) {
					return echo.NewHTTPError(http.StatusBadRequest, "The text you sent contains a NUL character (\\0), which no field takes. Remove it and try again.")
				}
			}
		}
		// A query (the lists' filters) that is not UTF-8 is refused too;
		// forms say so inline, keeping what was typed.
		for k, v := range vals[0] {
			if !utf8.ValidString(k) || slices.ContainsFunc(v, func(s string) bool { return !utf8.ValidString(s) }) {
				return echo.NewHTTPError(http.StatusBadRequest, "The address holds text that is not valid UTF-8. Fix the link and try again.")
			}
		}
		return next(c)
	}
}
