package web

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/password"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// A set-password link is /set-password?token=…: the token rides in the
// query, which the access log leaves out, never in the path, which it
// writes down.
const setPasswordPath = "/set-password"

// newPasswordLink makes a set-password link for u, voiding their earlier
// one, and keeps it for the next page to show once (keepSecret). Mail is
// not sent: the person who made it passes it on.
func (h *Handler) newPasswordLink(c echo.Context, u models.User, accountID *int64, note string) error {
	token, err := h.store.CreatePasswordLink(c.Request().Context(), u.ID, accountID, h.now())
	if err != nil {
		return err
	}
	h.log.Info("password link created", slog.Int64("user_id", u.ID), slog.Int64("by", currentUser(c).ID))
	link := c.Scheme() + "://" + c.Request().Host + setPasswordPath + "?" + url.Values{"token": {token}}.Encode()
	expires := h.now().Add(store.PasswordLinkTTL).UTC().Format("Jan 2, 2006")
	return h.keepSecret(c, keyNewLink, strings.Join([]string{u.Email, link, note, expires}, "\x00"))
}

// takeNewLink returns the set-password link waiting in the session and
// forgets it; nil when there is none.
func (h *Handler) takeNewLink(c echo.Context) *views.PasswordLinkShown {
	raw, ok := h.takeSecret(c, keyNewLink)
	if !ok {
		return nil
	}
	parts := strings.Split(raw, "\x00")
	if len(parts) != 4 {
		return nil
	}
	return &views.PasswordLinkShown{Email: parts[0], URL: parts[1], Note: parts[2], Expires: parts[3]}
}

func (h *Handler) newSetPasswordForm(token string, u models.User) views.SetPasswordForm {
	return views.SetPasswordForm{
		Token:   token,
		Email:   u.Email,
		New:     views.Field{Name: "password", Label: "Password", Type: "password", Required: true, Autocomplete: "new-password", Hint: "At least 10 characters."},
		Confirm: views.Field{Name: "confirm", Label: "Repeat the password", Type: "password", Required: true, Autocomplete: "new-password"},
	}
}

// linkKey is the rate limiter's key of set-password tries from one
// address: a wrong or dead token counts, like a wrong login.
func linkKey(c echo.Context) string { return "link:" + c.RealIP() }

// linkProblem answers a set-password link that cannot be used: too many
// tries, unknown or used, or expired. It returns nil for a link that works.
func (h *Handler) linkProblem(c echo.Context, err error) error {
	p := h.page(c, "Set your password")
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrLinkExpired):
		h.limiter.fail(linkKey(c))
		return render(c, http.StatusGone, views.LinkGonePage(p, "This link has expired",
			fmt.Sprintf("A set-password link works for %d days after it was made.", int(store.PasswordLinkTTL.Hours()/24))))
	case errors.Is(err, store.ErrNotFound):
		h.limiter.fail(linkKey(c))
		return render(c, http.StatusNotFound, views.LinkGonePage(p, "This link does not work",
			"It was used already, a newer link replaced it, or it was copied only in part."))
	}
	return err
}

// tooManyLinkTries answers 429 while this address has failed too often.
func (h *Handler) tooManyLinkTries(c echo.Context) (bool, error) {
	wait := h.limiter.wait(linkKey(c))
	if wait <= 0 {
		return false, nil
	}
	secs := int(math.Ceil(wait.Seconds()))
	c.Response().Header().Set("Retry-After", fmt.Sprint(secs))
	return true, render(c, http.StatusTooManyRequests, views.LinkGonePage(h.page(c, "Set your password"), "Too many tries",
		fmt.Sprintf("Try the link again in %d s.", secs)))
}

// showSetPassword is the page a set-password link opens.
func (h *Handler) showSetPassword(c echo.Context) error {
	if limited, err := h.tooManyLinkTries(c); limited {
		return err
	}
	token := c.QueryParam("token")
	l, u, err := h.store.PasswordLink(c.Request().Context(), token, h.now())
	if err != nil {
		return h.linkProblem(c, err)
	}
	f := h.newSetPasswordForm(token, u)
	f.Account = h.linkAccountName(c, l, u)
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return render(c, http.StatusOK, views.SetPasswordPage(h.page(c, "Set your password"), f))
}

// setPassword sets the password of a link's user, once, and logs them in
// where they were invited.
func (h *Handler) setPassword(c echo.Context) error {
	if limited, err := h.tooManyLinkTries(c); limited {
		return err
	}
	ctx := c.Request().Context()
	token := c.FormValue("token")
	l, u, err := h.store.PasswordLink(ctx, token, h.now())
	if err != nil {
		return h.linkProblem(c, err)
	}
	f := h.newSetPasswordForm(token, u)
	pw := newPassword(c, &f.New, &f.Confirm)
	if f.New.Error != "" || f.Confirm.Error != "" {
		f.Account = h.linkAccountName(c, l, u)
		return render(c, http.StatusUnprocessableEntity, views.SetPasswordPage(h.page(c, "Set your password"), f))
	}
	hash, err := password.Hash(pw)
	if err != nil {
		return err
	}
	l, u, err = h.store.UsePasswordLink(ctx, token, hash, h.now())
	if err != nil {
		return h.linkProblem(c, err)
	}
	h.limiter.reset(linkKey(c))
	h.log.Info("password set from a link", slog.Int64("user_id", u.ID))
	if err := h.startSession(c, u); err != nil {
		return err
	}
	if l.AccountID != nil {
		if _, err := h.store.AccountForUser(ctx, u.ID, *l.AccountID); err == nil {
			return c.Redirect(http.StatusSeeOther, views.AccountURL(*l.AccountID, ""))
		}
	}
	return c.Redirect(http.StatusSeeOther, "/")
}

// linkAccountName names the account the link's user was invited to, while
// they are still its member; "" otherwise.
func (h *Handler) linkAccountName(c echo.Context, l models.PasswordLink, u models.User) string {
	if l.AccountID == nil {
		return ""
	}
	a, err := h.store.AccountForUser(c.Request().Context(), u.ID, *l.AccountID)
	if err != nil {
		return ""
	}
	return a.Name
}

// keepSecret keeps a secret made for the person (a new ingest key, a
// set-password link) in their session under key, for the next page to
// show once (takeSecret), so that a reload neither shows it again nor
// makes another. A logged-in session is a database row: the secret waits
// there encrypted with the session keys, so a copy of the row (a backup)
// holds nothing that works.
func (h *Handler) keepSecret(c echo.Context, key, secret string) error {
	sealed, err := h.sessions.codec.Encode(key, secret)
	if err != nil {
		return err
	}
	session(c).Values[key] = sealed
	return saveSession(c)
}

// takeSecret returns the secret keepSecret kept under key and forgets it;
// false when there is none. The page that shows it is not cached.
func (h *Handler) takeSecret(c echo.Context, key string) (string, bool) {
	sess := session(c)
	sealed, ok := sess.Values[key].(string)
	if !ok {
		return "", false
	}
	delete(sess.Values, key)
	c.Set(ctxDirty, true)
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	var secret string
	if err := h.sessions.codec.Decode(key, sealed, &secret); err != nil {
		return "", false
	}
	return secret, true
}
