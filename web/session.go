package web

import (
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

const (
	sessionName   = "leadsignal"
	sessionMaxAge = 14 * 24 * 3600
	keyUserID     = "uid"
	keySessionID  = "sid"
	keyCSRF       = "csrf"
	ctxSession    = "session"
	ctxUser       = "user"
	ctxAccount    = "account"
	ctxDirty      = "session_dirty"
	keyNewKey     = "new_key"
	keyJunkSaved  = "junk_saved"
)

func newSessionStore(hashKey, blockKey []byte) *sessions.CookieStore {
	s := sessions.NewCookieStore(hashKey, blockKey)
	s.Options = &sessions.Options{
		Path:     "/",
		MaxAge:   sessionMaxAge,
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
	}
	s.MaxAge(sessionMaxAge)
	return s
}

// loadSession reads the session cookie (a broken or forged one is simply
// replaced) and the logged-in user, if any.
func (h *Handler) loadSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		sess, err := h.sessions.Get(c.Request(), sessionName)
		if err != nil {
			// The cookie did not verify or decrypt (an old secret, a forgery):
			// start over with an empty session.
			sess, _ = h.sessions.New(c.Request(), sessionName)
		}
		sess.Options.Secure = isTLS(c)
		c.Set(ctxSession, sess)

		if uid, ok := sess.Values[keyUserID].(int64); ok {
			u, err := h.store.UserByID(c.Request().Context(), uid)
			switch {
			case err == nil:
				c.Set(ctxUser, &u)
			case errors.Is(err, store.ErrNotFound):
				delete(sess.Values, keyUserID)
			default:
				return err
			}
		}
		return next(c)
	}
}

func isTLS(c echo.Context) bool {
	return c.IsTLS() || c.Request().Header.Get(echo.HeaderXForwardedProto) == "https"
}

func session(c echo.Context) *sessions.Session {
	s, _ := c.Get(ctxSession).(*sessions.Session)
	return s
}

func saveSession(c echo.Context) error {
	s := session(c)
	if s == nil {
		return nil
	}
	return s.Save(c.Request(), c.Response())
}

func currentUser(c echo.Context) *models.User {
	u, _ := c.Get(ctxUser).(*models.User)
	return u
}

func currentAccount(c echo.Context) *models.AccountAccess {
	a, _ := c.Get(ctxAccount).(*models.AccountAccess)
	return a
}

// csrfToken returns the session's CSRF token, making one when missing.
func csrfToken(c echo.Context) string {
	s := session(c)
	if s == nil {
		return ""
	}
	if t, ok := s.Values[keyCSRF].(string); ok && t != "" {
		return t
	}
	t := rand.Text()
	s.Values[keyCSRF] = t
	c.Set(ctxDirty, true)
	return t
}

// csrf refuses a state-changing request whose token (form field _csrf or
// header X-CSRF-Token, which htmx sends) does not match the session's.
func (h *Handler) csrf(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		switch c.Request().Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return next(c)
		}
		want, _ := session(c).Values[keyCSRF].(string)
		got := c.Request().Header.Get("X-CSRF-Token")
		if got == "" {
			got = c.FormValue("_csrf")
		}
		if want == "" || subtle.ConstantTimeCompare([]byte(want), []byte(got)) != 1 {
			return echo.NewHTTPError(http.StatusForbidden, "Your session expired or the form is stale")
		}
		return next(c)
	}
}

// startSession logs a user in on a brand-new session: new id, new CSRF
// token, so nothing from before the login (a planted cookie) carries over.
func startSession(c echo.Context, u models.User) error {
	s := session(c)
	for k := range s.Values {
		delete(s.Values, k)
	}
	s.ID = ""
	s.IsNew = true
	s.Values[keySessionID] = rand.Text()
	s.Values[keyUserID] = u.ID
	s.Values[keyCSRF] = rand.Text()
	return saveSession(c)
}

func endSession(c echo.Context) error {
	s := session(c)
	for k := range s.Values {
		delete(s.Values, k)
	}
	s.Options.MaxAge = -1
	return saveSession(c)
}

// setFlash keeps a message for the next page the user sees. It saves the
// session at once, as the caller is about to redirect.
func setFlash(c echo.Context, kind, msg string) {
	session(c).AddFlash(kind + "\x00" + msg)
	if err := saveSession(c); err != nil {
		slog.Error("save flash", slog.Any("error", err))
	}
}

func takeFlash(c echo.Context) views.Flash {
	s := session(c)
	if s == nil {
		return views.Flash{}
	}
	flashes := s.Flashes()
	if len(flashes) > 0 {
		c.Set(ctxDirty, true)
	}
	for _, f := range flashes {
		if str, ok := f.(string); ok {
			kind, msg, _ := strings.Cut(str, "\x00")
			return views.Flash{Kind: kind, Message: msg}
		}
	}
	return views.Flash{}
}

// requireUser sends anonymous visitors to the login page, back here after.
func (h *Handler) requireUser(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if currentUser(c) == nil {
			if isHTMX(c) {
				c.Response().Header().Set("HX-Redirect", "/login")
				return c.NoContent(http.StatusUnauthorized)
			}
			target := "/login"
			if c.Request().Method == http.MethodGet {
				target += "?next=" + url.QueryEscape(c.Request().URL.RequestURI())
			}
			return c.Redirect(http.StatusSeeOther, target)
		}
		return next(c)
	}
}

func (h *Handler) requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !currentUser(c).IsAdmin {
			return echo.NewHTTPError(http.StatusForbidden, "Only administrators can do this")
		}
		return next(c)
	}
}

// page gathers what the layout needs for the current request.
func (h *Handler) page(c echo.Context, title string) views.Page {
	p := views.Page{Title: title, User: currentUser(c), Account: currentAccount(c)}
	if session(c) != nil {
		p.CSRF = csrfToken(c)
		p.Flash = takeFlash(c)
		if dirty, _ := c.Get(ctxDirty).(bool); dirty {
			if err := saveSession(c); err != nil {
				h.log.Error("save session", slog.Any("error", err))
			}
		}
	}
	if p.User != nil {
		as, err := h.store.AccountsForUser(c.Request().Context(), p.User.ID)
		if err != nil {
			h.log.Error("list accounts for switcher", slog.Any("error", err))
		}
		p.Accounts = as
	}
	if p.Account != nil {
		p.Alerts = h.accountAlerts(c, p.Account.Account)
	}
	return p
}
