package web

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/capture"
	"github.com/leadsignal/leadsignal/internal/password"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// home sends each visitor where they belong: setup while there is no user,
// login when anonymous, else the last account they used.
func (h *Handler) home(c echo.Context) error {
	ctx := c.Request().Context()
	u := currentUser(c)
	if u == nil {
		n, err := h.store.CountUsers(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return c.Redirect(http.StatusSeeOther, "/setup")
		}
		return c.Redirect(http.StatusSeeOther, "/login")
	}
	if u.LastAccountID != nil {
		if _, err := h.store.AccountForUser(ctx, u.ID, *u.LastAccountID); err == nil {
			return c.Redirect(http.StatusSeeOther, views.AccountURL(*u.LastAccountID, ""))
		}
	}
	as, err := h.store.AccountsForUser(ctx, u.ID)
	if err != nil {
		return err
	}
	if len(as) == 1 {
		return c.Redirect(http.StatusSeeOther, views.AccountURL(as[0].ID, ""))
	}
	return c.Redirect(http.StatusSeeOther, "/accounts")
}

func newSetupForm() views.SetupForm {
	return views.SetupForm{
		Email:    views.Field{Name: "email", Label: "Email", Type: "email", Required: true, Autocomplete: "username"},
		Password: views.Field{Name: "password", Label: "Password", Type: "password", Required: true, Autocomplete: "new-password", Hint: "At least 10 characters."},
		Confirm:  views.Field{Name: "confirm", Label: "Repeat password", Type: "password", Required: true, Autocomplete: "new-password"},
	}
}

func (h *Handler) showSetup(c echo.Context) error {
	n, err := h.store.CountUsers(c.Request().Context())
	if err != nil {
		return err
	}
	if n > 0 {
		return c.Redirect(http.StatusSeeOther, "/login")
	}
	return render(c, http.StatusOK, views.SetupPage(h.page(c, "Set up"), newSetupForm()))
}

func (h *Handler) createFirstAdmin(c echo.Context) error {
	f := newSetupForm()
	f.Email.Value = strings.TrimSpace(c.FormValue("email"))
	f.Email.Error = checkEmail(f.Email.Value)
	pw := newPassword(c, &f.Password, &f.Confirm)
	if f.Email.Error != "" || f.Password.Error != "" || f.Confirm.Error != "" {
		return render(c, http.StatusUnprocessableEntity, views.SetupPage(h.page(c, "Set up"), f))
	}
	hash, err := password.Hash(pw)
	if err != nil {
		return err
	}
	u, err := h.store.CreateFirstAdmin(c.Request().Context(), f.Email.Value, hash)
	if errors.Is(err, store.ErrUsersExist) {
		return c.Redirect(http.StatusSeeOther, "/login")
	}
	if err != nil {
		return err
	}
	if err := h.startSession(c, u); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/accounts")
}

func (h *Handler) showLogin(c echo.Context) error {
	if currentUser(c) != nil {
		return c.Redirect(http.StatusSeeOther, safeNext(c.QueryParam("next")))
	}
	n, err := h.store.CountUsers(c.Request().Context())
	if err != nil {
		return err
	}
	if n == 0 {
		return c.Redirect(http.StatusSeeOther, "/setup")
	}
	f := views.LoginForm{
		Email: views.Field{Name: "email", Label: "Email", Type: "email", Required: true, Autocomplete: "username"},
		Next:  safeNext(c.QueryParam("next")),
	}
	return render(c, http.StatusOK, views.LoginPage(h.page(c, "Log in"), f))
}

// loginFailed is the one message for a wrong email or a wrong password, so
// the form never tells which accounts exist.
const loginFailed = "Wrong email or password."

func (h *Handler) login(c echo.Context) error {
	email := strings.ToLower(strings.TrimSpace(c.FormValue("email")))
	pw := c.FormValue("password")
	f := views.LoginForm{
		Email: views.Field{Name: "email", Label: "Email", Type: "email", Required: true, Autocomplete: "username", Value: email},
		Next:  c.FormValue("next"),
	}
	ipKey, emailKey := "ip:"+c.RealIP(), "email:"+email
	if wait := max(h.limiter.wait(ipKey), h.limiter.wait(emailKey)); wait > 0 {
		secs := int(math.Ceil(wait.Seconds()))
		c.Response().Header().Set("Retry-After", fmt.Sprint(secs))
		f.Error = fmt.Sprintf("Too many login attempts. Try again in %d s.", secs)
		return render(c, http.StatusTooManyRequests, views.LoginPage(h.page(c, "Log in"), f))
	}

	u, err := h.store.UserByEmail(c.Request().Context(), email)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	// Check runs bcrypt even for an unknown email (empty hash), so the
	// answer takes as long either way.
	if !password.Check(u.PasswordHash, pw) {
		h.limiter.fail(ipKey)
		h.limiter.fail(emailKey)
		f.Error = loginFailed
		return render(c, http.StatusUnprocessableEntity, views.LoginPage(h.page(c, "Log in"), f))
	}
	h.limiter.reset(emailKey)
	if err := h.startSession(c, u); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, safeNext(f.Next))
}

func (h *Handler) logout(c echo.Context) error {
	if err := h.endSession(c, ""); err != nil {
		return err
	}
	return redirect(c, "/login")
}

// logoutEverywhere ends every session of the user, on every device and
// replica, this one included.
func (h *Handler) logoutEverywhere(c echo.Context) error {
	u := currentUser(c)
	n, err := h.store.DeleteUserSessions(c.Request().Context(), u.ID, "")
	if err != nil {
		return err
	}
	h.log.Info("logged out everywhere", slog.Int64("user_id", u.ID), slog.Int64("sessions", n))
	if err := h.endSession(c, "You were logged out on every device."); err != nil {
		return err
	}
	return redirect(c, "/login")
}

// maxNext bounds a post-login path; longer ones are not ours.
const maxNext = 2048

// safeNext keeps a post-login redirect on this site: a local path, else /.
func safeNext(next string) string {
	if localPath(next) {
		return next
	}
	return "/"
}

// localPath reports whether p is a path on this site: one leading slash
// followed by neither a slash nor a backslash, no scheme or host, and no
// control character, whitespace or backslash anywhere. Browsers drop tabs
// and newlines and read a backslash as a slash, so "/\t/evil.example" and
// "/\\evil.example" lead elsewhere. The path is checked again decoded
// ("/%5Cevil.example"), as a proxy or framework on the way might decode it.
func localPath(p string) bool {
	if len(p) > maxNext || !rootedHere(p) || strings.ContainsFunc(p, unsafeInPath) {
		return false
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return false
	}
	return rootedHere(u.Path) && !strings.ContainsFunc(u.Path, func(r rune) bool {
		return r != ' ' && unsafeInPath(r)
	})
}

// rootedHere reports whether p starts with one slash and not two, or a
// slash and a backslash.
func rootedHere(p string) bool {
	return strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "//") && !strings.HasPrefix(p, "/\\")
}

func unsafeInPath(r rune) bool {
	return r == '\\' || r == utf8.RuneError || unicode.IsSpace(r) || capture.Invisible(r)
}

// checkEmail returns an error message for an unusable login email.
func checkEmail(s string) string {
	if s == "" {
		return "Enter an email address."
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || !strings.Contains(s[strings.LastIndex(s, "@"):], ".") {
		return "Enter a valid email address, like name@example.com."
	}
	return ""
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
