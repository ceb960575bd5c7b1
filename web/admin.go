package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/password"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

func newUserForm() views.UserForm {
	return views.UserForm{
		Email:    views.Field{Name: "email", Label: "Email", Type: "email", Required: true, Autocomplete: "off"},
		Password: views.Field{Name: "password", Label: "Initial password", Type: "password", Required: true, Autocomplete: "new-password", Hint: "At least 10 characters; share it safely."},
	}
}

func (h *Handler) usersPage(c echo.Context, status int, f views.UserForm) error {
	users, err := h.store.Users(c.Request().Context())
	if err != nil {
		return err
	}
	return render(c, status, views.UsersPage(h.page(c, "Users"), users, f))
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
	if err := password.Validate(pw); err != nil {
		f.Password.Error = capitalize(err.Error()) + "."
	}
	if f.Email.Error != "" || f.Password.Error != "" {
		return h.usersPage(c, http.StatusUnprocessableEntity, f)
	}
	hash, err := password.Hash(pw)
	if err != nil {
		return err
	}
	u, err := h.store.CreateUser(c.Request().Context(), f.Email.Value, hash, f.Admin)
	if errors.Is(err, store.ErrConflict) {
		f.Email.Error = "A user with this email already exists."
		return h.usersPage(c, http.StatusUnprocessableEntity, f)
	}
	if err != nil {
		return err
	}
	setFlash(c, "ok", "User "+u.Email+" created. Add them to accounts from each account's settings.")
	return c.Redirect(http.StatusSeeOther, "/admin/users")
}
