package web

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/config"
	"github.com/leadsignal/leadsignal/internal/password"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

func newUserForm() views.UserForm {
	return views.UserForm{
		Email:    views.Field{Name: "email", Label: "Email", Type: "email", Required: true, Autocomplete: "off"},
		Password: views.Field{Name: "password", Label: "Initial password", Type: "password", Autocomplete: "new-password", Hint: "At least 10 characters; share it safely. Empty: a set-password link to send them instead."},
	}
}

func (h *Handler) usersPage(c echo.Context, status int, f views.UserForm) error {
	users, err := h.store.Users(c.Request().Context())
	if err != nil {
		return err
	}
	// The link is taken before the page is made, which saves the session
	// that forgot it.
	v := views.UsersView{Users: users, Form: f, Link: h.takeNewLink(c)}
	return render(c, status, views.UsersPage(h.page(c, "Users"), v))
}

func (h *Handler) showUsers(c echo.Context) error {
	return h.usersPage(c, http.StatusOK, newUserForm())
}

func (h *Handler) createUser(c echo.Context) error {
	f := newUserForm()
	f.Email.Value = strings.TrimSpace(c.FormValue("email"))
	f.Admin = c.FormValue("admin") == "1"
	pw := c.FormValue("password")
	f.Email.Error = checkEmail(f.Email.Value)
	if pw != "" {
		if err := password.Validate(pw); err != nil {
			f.Password.Error = capitalize(err.Error()) + "."
		}
	}
	if f.Email.Error != "" || f.Password.Error != "" {
		return h.usersPage(c, http.StatusUnprocessableEntity, f)
	}
	// Without a password the user logs in through a set-password link.
	hash := ""
	if pw != "" {
		var err error
		if hash, err = password.Hash(pw); err != nil {
			return err
		}
	}
	u, err := h.store.CreateUser(c.Request().Context(), f.Email.Value, hash, f.Admin)
	if errors.Is(err, store.ErrConflict) {
		f.Email.Error = "A user with this email already exists."
		return h.usersPage(c, http.StatusUnprocessableEntity, f)
	}
	if err != nil {
		return err
	}
	if hash == "" {
		if err := h.newPasswordLink(c, u, nil, "User "+u.Email+" created."); err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, "/admin/users")
	}
	setFlash(c, "ok", "User "+u.Email+" created. Add them to accounts from each account's settings.")
	return c.Redirect(http.StatusSeeOther, "/admin/users")
}

// createUserLink makes a set-password link for a user who has no password
// yet, voiding their earlier one. A user with a password changes it on
// their own password page.
func (h *Handler) createUserLink(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("user"), 10, 64)
	if err != nil {
		return store.ErrNotFound
	}
	u, err := h.store.UserByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if u.PasswordHash != "" {
		setFlash(c, "error", u.Email+" has a password already: they change it on their password page.")
		return c.Redirect(http.StatusSeeOther, "/admin/users")
	}
	if err := h.newPasswordLink(c, u, nil, "A new link for "+u.Email+": an earlier one no longer works."); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/admin/users")
}

// removeUser takes a user off the instance: their memberships go, and
// every session they have ends at once.
func (h *Handler) removeUser(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("user"), 10, 64)
	if err != nil {
		return store.ErrNotFound
	}
	if id == currentUser(c).ID {
		setFlash(c, "error", "You cannot remove yourself; another administrator can.")
		return c.Redirect(http.StatusSeeOther, "/admin/users")
	}
	u, err := h.store.UserByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	err = h.store.DeleteUser(c.Request().Context(), id)
	switch {
	case errors.Is(err, store.ErrLastOwner):
		setFlash(c, "error", u.Email+" is the only owner of an account: make someone else its owner first.")
	case err != nil:
		return err
	default:
		h.log.Info("user removed", slog.Int64("user_id", id), slog.Int64("by", currentUser(c).ID))
		setFlash(c, "ok", u.Email+" was removed, and logged out everywhere.")
	}
	return c.Redirect(http.StatusSeeOther, "/admin/users")
}

// maxEchoedURL bounds a refused public address shown back in its field.
const maxEchoedURL = 1000

// serverSettings is the server settings page's view: the public address
// as saved or typed, and LEADSIGNAL_PUBLIC_URL when it wins.
func (h *Handler) serverSettings(c echo.Context) (views.ServerSettingsView, error) {
	set, err := h.store.InstanceSettings(c.Request().Context())
	if err != nil {
		return views.ServerSettingsView{}, err
	}
	v := views.ServerSettingsView{
		PublicURL: views.Field{Name: "public_url", Label: "Public address", Value: set.PublicURL, Autocomplete: "off",
			Hint: "The address CRMs reach leadsignal at, like https://leads.example.com: http or https, a host and an optional port, nothing after it."},
		FromEnv: h.crm.PublicURL,
		Saved:   set.PublicURL,
	}
	// The address the administrator's browser uses is a good first guess.
	if here, err := config.PublicURL(requestBase(c)); err == nil && here != set.PublicURL {
		v.Here = here
	}
	return v, nil
}

// showServerSettings is the server settings page: the public address hook
// URLs are made with.
func (h *Handler) showServerSettings(c echo.Context) error {
	v, err := h.serverSettings(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.ServerSettingsPage(h.page(c, "Server settings"), v))
}

// saveServerSettings saves the public address typed, checked as
// LEADSIGNAL_PUBLIC_URL is; an empty one clears it.
func (h *Handler) saveServerSettings(c echo.Context) error {
	v, err := h.serverSettings(c)
	if err != nil {
		return err
	}
	typed := c.FormValue("public_url")
	clean, err := config.PublicURL(typed)
	if err != nil {
		v.PublicURL.Value, v.PublicURL.Error = strings.ToValidUTF8(typed, "\uFFFD"), sentence(err.Error())
		if len(typed) > maxEchoedURL {
			v.PublicURL.Value = "" // a pasted page is not shown back whole
		}
		return render(c, http.StatusUnprocessableEntity, views.ServerSettingsPage(h.page(c, "Server settings"), v))
	}
	u := currentUser(c)
	if err := h.store.SavePublicURL(c.Request().Context(), clean, u.ID, h.now()); err != nil {
		return err
	}
	h.log.Info("public url saved", slog.String("public_url", clean), slog.Int64("by", u.ID))
	msg := "Public address saved: hook URLs are made with it."
	switch {
	case clean == "":
		msg = "Public address cleared: pages make hook URLs with the address the browser uses."
	case h.crm.PublicURL != "":
		msg = "Public address saved. LEADSIGNAL_PUBLIC_URL still wins while it is set on the server."
	}
	setFlash(c, "ok", msg)
	return c.Redirect(http.StatusSeeOther, "/admin/settings")
}
