package web

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

const (
	sessionName = "leadsignal"
	keyUserID   = "uid"
	keyCSRF     = "csrf"
	ctxSession  = "session"
	ctxUser     = "user"
	ctxAccount  = "account"
	// ctxIngestKey is the id of the ingest key an API call came with.
	ctxIngestKey = "ingest_key"
	ctxDirty     = "session_dirty"
	keyNewKey    = "new_key"
	keyJunkSaved = "junk_saved"
)

// touchEvery is how stale a session's last-seen time may get before a
// request writes it again: the idle limit needs minutes, not every request.
const touchEvery = time.Minute

// sessionStore is a gorilla sessions.Store that keeps every logged-in
// session in the database (store.Session) and puts only its random id,
// signed and encrypted, in the cookie. Ending a session is deleting its
// row, which every replica sees at once: a copied cookie stops working at
// logout. A session nobody has logged in on holds only the login form's
// CSRF token and a flash message, nothing worth revoking: its values ride
// in the cookie itself, signed and encrypted, so anonymous visitors write
// nothing to the database.
type sessionStore struct {
	store  *store.Store
	codec  *securecookie.SecureCookie
	limits store.SessionLimits
	now    func() time.Time
}

func newSessionStore(s *store.Store, hashKey, blockKey []byte, limits store.SessionLimits, now func() time.Time) *sessionStore {
	codec := securecookie.New(hashKey, blockKey)
	codec.MaxAge(int(limits.Absolute / time.Second))
	return &sessionStore{store: s, codec: codec, limits: limits, now: func() time.Time { return now().UTC() }}
}

// idHash is what the database keeps of a session id.
func idHash(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

func (st *sessionStore) options() *sessions.Options {
	return &sessions.Options{
		Path:     "/",
		MaxAge:   int(st.limits.Absolute / time.Second),
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
	}
}

// Get returns the request's session, loading it once per request.
func (st *sessionStore) Get(r *http.Request, name string) (*sessions.Session, error) {
	return sessions.GetRegistry(r).Get(st, name)
}

// New loads the session the request's cookie carries or names. A missing,
// forged or ended session gives a new, empty one; only a database failure
// is an error.
func (st *sessionStore) New(r *http.Request, name string) (*sessions.Session, error) {
	s := sessions.NewSession(st, name)
	s.Options = st.options()
	s.IsNew = true
	c, err := r.Cookie(name)
	if err != nil {
		return s, nil
	}
	// A logged-in session's cookie is its id, an anonymous one's its values.
	var id string
	if st.codec.Decode(name, c.Value, &id) != nil || id == "" {
		var vals map[any]any
		if st.codec.Decode(name, c.Value, &vals) == nil {
			s.Values, s.IsNew = vals, false
			delete(s.Values, keyUserID) // only a session in the database is logged in
		}
		return s, nil
	}
	now := st.now()
	row, err := st.store.Session(r.Context(), idHash(id), now, st.limits)
	if errors.Is(err, store.ErrNotFound) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	if err := (securecookie.GobEncoder{}).Deserialize(row.Data, &s.Values); err != nil {
		return s, nil // values this version cannot read: start over
	}
	s.ID, s.IsNew = id, false
	if now.Sub(row.LastSeenAt) > touchEvery {
		if err := st.store.TouchSession(r.Context(), row.IDHash, now); err != nil {
			return s, err
		}
	}
	return s, nil
}

// Save writes the session and its cookie. A session with a negative MaxAge
// is ended: its row is deleted and the cookie cleared. A session ended
// elsewhere meanwhile (another tab's logout) stays ended, and its cookie
// is left alone: a newer session may have replaced it.
func (st *sessionStore) Save(r *http.Request, w http.ResponseWriter, s *sessions.Session) error {
	ctx := r.Context()
	uid, loggedIn := s.Values[keyUserID].(int64)
	if s.ID != "" && (s.Options.MaxAge < 0 || !loggedIn) {
		if err := st.store.DeleteSession(ctx, idHash(s.ID)); err != nil {
			return err
		}
		s.ID = ""
	}
	if s.Options.MaxAge < 0 {
		http.SetCookie(w, sessions.NewCookie(s.Name(), "", s.Options))
		return nil
	}
	if !loggedIn {
		return st.setCookie(w, s, s.Values)
	}
	data, err := (securecookie.GobEncoder{}).Serialize(s.Values)
	if err != nil {
		return fmt.Errorf("encode session: %w", err)
	}
	now := st.now()
	row := models.Session{UserID: &uid, Data: data, LastSeenAt: now}
	if s.ID == "" {
		s.ID = rand.Text()
		row.IDHash, row.CreatedAt = idHash(s.ID), now
		if err := st.store.CreateSession(ctx, row); err != nil {
			return err
		}
	} else {
		row.IDHash = idHash(s.ID)
		err := st.store.UpdateSession(ctx, row)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return st.setCookie(w, s, s.ID)
}

// setCookie writes the session's cookie with v, signed and encrypted: the
// id of a logged-in session, the values of an anonymous one.
func (st *sessionStore) setCookie(w http.ResponseWriter, s *sessions.Session, v any) error {
	encoded, err := st.codec.Encode(s.Name(), v)
	if err != nil {
		return fmt.Errorf("encode session cookie: %w", err)
	}
	http.SetCookie(w, sessions.NewCookie(s.Name(), encoded, s.Options))
	return nil
}

// loadSession reads the session cookie (a broken, forged or ended one is
// simply replaced) and the logged-in user, if any.
func (h *Handler) loadSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		sess, err := h.sessions.Get(c.Request(), sessionName)
		if err != nil {
			return err
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

// csrf refuses a state-changing request whose token does not match the
// session's. The token comes from the header X-CSRF-Token (htmx sends it,
// set by the layout's hx-headers) or the body's form field _csrf, never
// from the query string: a token in a URL ends up in access logs, the
// browser's history and Referer headers.
func (h *Handler) csrf(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		switch c.Request().Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return next(c)
		}
		want, _ := session(c).Values[keyCSRF].(string)
		got := c.Request().Header.Get("X-CSRF-Token")
		if got == "" {
			got = c.Request().PostFormValue("_csrf")
		}
		if want == "" || subtle.ConstantTimeCompare([]byte(want), []byte(got)) != 1 {
			return echo.NewHTTPError(http.StatusForbidden, "Your session expired or the form is stale")
		}
		return next(c)
	}
}

// startSession logs a user in on a brand-new session: new id, new CSRF
// token, so nothing from before the login (a planted cookie) carries over;
// the session it replaces is ended.
func (h *Handler) startSession(c echo.Context, u models.User) error {
	s := session(c)
	if s.ID != "" {
		if err := h.store.DeleteSession(c.Request().Context(), idHash(s.ID)); err != nil {
			return err
		}
	}
	for k := range s.Values {
		delete(s.Values, k)
	}
	s.ID = ""
	s.IsNew = true
	s.Values[keyUserID] = u.ID
	s.Values[keyCSRF] = rand.Text()
	return saveSession(c)
}

// endSession ends the request's session everywhere and starts an empty
// one in its place that carries the flash message msg to the login page.
func (h *Handler) endSession(c echo.Context, msg string) error {
	s := session(c)
	s.Options.MaxAge = -1
	if err := saveSession(c); err != nil {
		return err
	}
	for k := range s.Values {
		delete(s.Values, k)
	}
	s.ID, s.IsNew = "", true
	s.Options = h.sessions.options()
	s.Options.Secure = isTLS(c)
	if msg != "" {
		setFlash(c, "success", msg)
	}
	return nil
}

// setFlash keeps a message for the next page the user sees. It saves the
// session at once, as the caller is about to redirect.
func setFlash(c echo.Context, kind, msg string) {
	session(c).AddFlash(kind + "\x00" + msg)
	if err := saveSession(c); err != nil {
		slog.Error("save flash", slog.Any("error", err))
	}
}

// takeFlashes removes the waiting messages from the session and returns
// them newest first: after two actions, both are shown.
func takeFlashes(c echo.Context) []views.Flash {
	s := session(c)
	if s == nil {
		return nil
	}
	stored := s.Flashes()
	if len(stored) > 0 {
		c.Set(ctxDirty, true)
	}
	var fs []views.Flash
	for i := len(stored) - 1; i >= 0; i-- {
		if str, ok := stored[i].(string); ok {
			kind, msg, _ := strings.Cut(str, "\x00")
			fs = append(fs, views.Flash{Kind: kind, Message: msg})
		}
	}
	return fs
}

// requireUser sends anonymous visitors to the login page, back here after.
// The page to come back to rides along only when the login would accept
// it (a local path of bounded length), so a hostile or 40,000-character
// address is not copied into the Location header.
func (h *Handler) requireUser(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if currentUser(c) == nil {
			if isHTMX(c) {
				c.Response().Header().Set("HX-Redirect", "/login")
				return c.NoContent(http.StatusUnauthorized)
			}
			target := "/login"
			if uri := c.Request().URL.RequestURI(); c.Request().Method == http.MethodGet && localPath(uri) {
				target += "?next=" + url.QueryEscape(uri)
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
		p.Flashes = takeFlashes(c)
		if dirty, _ := c.Get(ctxDirty).(bool); dirty {
			if err := saveSession(c); err != nil {
				h.log.Error("save session", slog.Any("error", err))
			}
		}
	}
	// The switcher's list is read when it opens (showSwitcher): an
	// agency's every page would otherwise read and draw hundreds of
	// accounts for a menu seldom opened.
	switch {
	case p.Account != nil:
		p.HasAccounts = true
	case p.User != nil:
		has, err := h.store.HasAccounts(c.Request().Context(), p.User.ID)
		if err != nil {
			h.log.Error("accounts for switcher", slog.Any("error", err))
		}
		p.HasAccounts = has
	}
	if p.Account != nil {
		p.Alerts = h.accountAlerts(c, p.Account.Account)
	}
	return p
}
