package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// keyNewLink carries a set-password link, once, from the form that made it
// to the page that shows it: "email\x00url\x00note\x00expires", encrypted
// (newPasswordLink).
const keyNewLink = "new_password_link"

func newMemberForm() views.MemberForm {
	return views.MemberForm{
		Email: views.Field{Name: "email", Label: "Email", Type: "email", Required: true, Autocomplete: "off"},
		Role:  views.Field{Name: "role", Label: "Role", Value: string(models.RoleViewer)},
	}
}

// membersView loads the account's members, with an empty invite form.
func (h *Handler) membersView(c echo.Context) (views.MembersView, error) {
	ctx := c.Request().Context()
	a := currentAccount(c)
	members, err := h.store.Members(ctx, a.ID)
	if err != nil {
		return views.MembersView{}, err
	}
	pending, err := h.store.MembersWithoutPassword(ctx, a.ID)
	if err != nil {
		return views.MembersView{}, err
	}
	return views.MembersView{Members: members, Pending: pending, Form: newMemberForm()}, nil
}

func (h *Handler) renderMembers(c echo.Context, status int, v views.MembersView) error {
	return render(c, status, views.MembersPage(h.settingsPage(c, "Members"), v))
}

// showMembers is the settings' members section; right after an invite it
// shows the set-password link, once.
func (h *Handler) showMembers(c echo.Context) error {
	v, err := h.membersView(c)
	if err != nil {
		return err
	}
	v.Link = h.takeNewLink(c)
	return h.renderMembers(c, http.StatusOK, v)
}

// addMember invites someone into the account in one step: the user is
// created when nobody has the email, then added with the role. Someone
// without a password (new, or invited before) gets a set-password link
// for the owner to pass on, which voids their earlier one.
func (h *Handler) addMember(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	mf := newMemberForm()
	mf.Email.Value = strings.TrimSpace(c.FormValue("email"))
	mf.Role.Value = c.FormValue("role")
	role := models.Role(mf.Role.Value)
	if !role.Valid() {
		mf.Role.Error = "Choose a role."
	}
	mf.Email.Error = checkEmail(mf.Email.Value)
	if mf.Email.Error != "" || mf.Role.Error != "" {
		return h.memberFormError(c, mf)
	}
	u, err := h.store.InviteMember(ctx, a.ID, mf.Email.Value, role)
	already := errors.Is(err, store.ErrAlreadyMember)
	switch {
	case already && u.PasswordHash != "":
		mf.Email.Error = u.Email + " is already a member of " + a.Name + ": change their role in the list above."
		return h.memberFormError(c, mf)
	case errors.Is(err, store.ErrInvitedElsewhere):
		mf.Email.Error = mf.Email.Value + " has been invited elsewhere and has not set a password yet: invite them again once they have."
		return h.memberFormError(c, mf)
	case err != nil && !already:
		return err
	}
	if u.PasswordHash != "" {
		setFlash(c, "ok", u.Email+" already has a login: they now see "+a.Name+" as "+string(role)+". No link needed.")
		return c.Redirect(http.StatusSeeOther, views.SettingsURL(a.ID, views.SettingsMembers))
	}
	note := u.Email + " is now " + string(role) + " of " + a.Name + "."
	if already {
		note = u.Email + " is already a member; this new link replaces the earlier one, which no longer works."
	}
	if err := h.newPasswordLink(c, u, &a.ID, note); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, views.SettingsURL(a.ID, views.SettingsMembers))
}

// memberParam reads the :user parameter; a user who is not a member of the
// current account is not found.
func (h *Handler) memberParam(c echo.Context) (models.Member, error) {
	id, err := strconv.ParseInt(c.Param("user"), 10, 64)
	if err != nil {
		return models.Member{}, store.ErrNotFound
	}
	members, err := h.store.Members(c.Request().Context(), currentAccount(c).ID)
	if err != nil {
		return models.Member{}, err
	}
	for _, m := range members {
		if m.UserID == id {
			return m, nil
		}
	}
	return models.Member{}, store.ErrNotFound
}

func (h *Handler) setMemberRole(c echo.Context) error {
	a := currentAccount(c)
	m, err := h.memberParam(c)
	if err != nil {
		return err
	}
	role := models.Role(c.FormValue("role"))
	if !role.Valid() {
		return echo.NewHTTPError(http.StatusBadRequest, "Unknown role")
	}
	err = h.store.SetMember(c.Request().Context(), a.ID, m.UserID, role)
	switch {
	case errors.Is(err, store.ErrLastOwner):
		setFlash(c, "error", "The account needs at least one owner: make someone else owner first.")
	case err != nil:
		return err
	default:
		setFlash(c, "ok", m.Email+" is now "+string(role)+".")
	}
	return h.afterMemberChange(c, m.UserID)
}

func (h *Handler) removeMember(c echo.Context) error {
	a := currentAccount(c)
	m, err := h.memberParam(c)
	if err != nil {
		return err
	}
	keep := ""
	if m.UserID == currentUser(c).ID {
		keep = idHash(session(c).ID)
	}
	err = h.store.RemoveMember(c.Request().Context(), a.ID, m.UserID, keep)
	switch {
	case errors.Is(err, store.ErrLastOwner):
		setFlash(c, "error", "The account needs at least one owner: make someone else owner first.")
	case err != nil:
		return err
	default:
		setFlash(c, "ok", m.Email+" was removed from "+a.Name+".")
	}
	return h.afterMemberChange(c, m.UserID)
}

// afterMemberChange returns to the members section, or to the account list
// when the owner just removed or demoted themselves out of settings.
func (h *Handler) afterMemberChange(c echo.Context, changed int64) error {
	a := currentAccount(c)
	if changed == currentUser(c).ID {
		if _, err := h.store.AccountForUser(c.Request().Context(), changed, a.ID); err != nil {
			return c.Redirect(http.StatusSeeOther, "/accounts")
		}
		return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, ""))
	}
	return c.Redirect(http.StatusSeeOther, views.SettingsURL(a.ID, views.SettingsMembers))
}

func (h *Handler) memberFormError(c echo.Context, mf views.MemberForm) error {
	v, err := h.membersView(c)
	if err != nil {
		return err
	}
	v.Form = mf
	return h.renderMembers(c, http.StatusUnprocessableEntity, v)
}

// EmailProblem says what is wrong with an email address, or "" when it is
// fine. The command line (leadsignal member) shares it with the Members
// page.
func EmailProblem(s string) string { return checkEmail(s) }
