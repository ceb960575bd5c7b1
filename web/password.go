package web

import (
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/password"
	"github.com/leadsignal/leadsignal/views"
)

func (h *Handler) newPasswordForm() views.PasswordForm {
	return views.PasswordForm{
		Idle:    h.sessions.limits.Idle,
		Max:     h.sessions.limits.Absolute,
		Current: views.Field{Name: "current", Label: "Current password", Type: "password", Required: true, Autocomplete: "current-password"},
		New:     views.Field{Name: "password", Label: "New password", Type: "password", Required: true, Autocomplete: "new-password", Hint: "At least 10 characters."},
		Confirm: views.Field{Name: "confirm", Label: "Repeat the new password", Type: "password", Required: true, Autocomplete: "new-password"},
	}
}

func (h *Handler) showPassword(c echo.Context) error {
	return h.passwordPage(c, http.StatusOK, h.newPasswordForm())
}

func (h *Handler) passwordPage(c echo.Context, status int, f views.PasswordForm) error {
	n, err := h.store.CountUserSessions(c.Request().Context(), currentUser(c).ID, h.now(), h.sessions.limits)
	if err != nil {
		return err
	}
	f.Sessions = n
	return render(c, status, views.PasswordPage(h.page(c, "Your password"), f))
}

// changePassword replaces the user's password and ends their other
// sessions: whoever else knew the old one is logged out everywhere.
func (h *Handler) changePassword(c echo.Context) error {
	u := currentUser(c)
	f := h.newPasswordForm()
	// The current password proves it is the user, not someone holding
	// their session; tries are limited like logins.
	key := "password:" + strconv.FormatInt(u.ID, 10)
	if wait := h.limiter.wait(key); wait > 0 {
		f.Error = fmt.Sprintf("Too many attempts. Try again in %d s.", int(math.Ceil(wait.Seconds())))
		return h.passwordPage(c, http.StatusTooManyRequests, f)
	}
	if !password.Check(u.PasswordHash, c.FormValue("current")) {
		h.limiter.fail(key)
		f.Current.Error = "This is not your current password."
	}
	pw := newPassword(c, &f.New, &f.Confirm)
	if f.Current.Error != "" || f.New.Error != "" || f.Confirm.Error != "" {
		return h.passwordPage(c, http.StatusUnprocessableEntity, f)
	}
	hash, err := password.Hash(pw)
	if err != nil {
		return err
	}
	if err := h.store.SetUserPassword(c.Request().Context(), u.ID, hash); err != nil {
		return err
	}
	h.limiter.reset(key)
	h.log.Info("password changed", slog.Int64("user_id", u.ID))
	// Every session ended, this one too, as it may be the one that leaked:
	// the person who changed the password goes on in a new one.
	if err := h.startSession(c, *u); err != nil {
		return err
	}
	setFlash(c, "ok", "Your password was changed. You were logged out on every other device.")
	return c.Redirect(http.StatusSeeOther, "/password")
}

// newPassword reads a form's new password ("password") and its repeat
// ("confirm"), and puts what is wrong with them beside their fields: both
// at once, so that the next try fixes both.
func newPassword(c echo.Context, pw, confirm *views.Field) string {
	v := c.FormValue("password")
	if err := password.Validate(v); err != nil {
		pw.Error = capitalize(err.Error()) + "."
	}
	if v != c.FormValue("confirm") {
		confirm.Error = "The passwords do not match."
	}
	return v
}
