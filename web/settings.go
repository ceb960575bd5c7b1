package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/capture"
	"github.com/leadsignal/leadsignal/internal/country"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

func settingsForm(a models.Account) views.SettingsForm {
	return views.SettingsForm{
		Name:           views.Field{Name: "name", Label: "Name", Required: true, Value: a.Name},
		Timezone:       views.Field{Name: "timezone", Label: "Time zone", Required: true, Value: a.Timezone, List: "timezones", Hint: "IANA name, e.g. Europe/Berlin; dashboards count days in it."},
		DefaultCountry: views.Field{Name: "default_country", Label: "Default country", Value: a.DefaultCountry, Hint: "For phone numbers without a country code."},
		Currency:       views.Field{Name: "currency", Label: "Currency", Required: true, Value: a.Currency, List: "currencies", Hint: "ISO 4217, e.g. USD."},
		CRMName:        views.Field{Name: "crm_name", Label: "CRM name", Value: a.CRMName, Hint: "Sent to Meta as lead_event_source, e.g. HubSpot."},
		WebsiteURL: views.Field{Name: "website_url", Label: "Website URL", Type: "url", Value: a.WebsiteURL,
			Hint: "Sent to Meta as event_source_url for website leads posted without one, e.g. https://www.example.com/contact."},
	}
}

func newMemberForm() views.MemberForm {
	return views.MemberForm{
		Email: views.Field{Name: "email", Label: "Email of an existing user", Type: "email", Required: true},
		Role:  views.Field{Name: "role", Label: "Role", Value: string(models.RoleViewer)},
	}
}

// settingsView loads everything the settings page shows, with empty forms.
func (h *Handler) settingsView(c echo.Context) (views.SettingsView, error) {
	ctx := c.Request().Context()
	a := currentAccount(c)
	members, err := h.store.Members(ctx, a.ID)
	if err != nil {
		return views.SettingsView{}, err
	}
	keys, err := h.store.IngestKeys(ctx, a.ID)
	if err != nil {
		return views.SettingsView{}, err
	}
	jf, err := junkForm(a.Account)
	if err != nil {
		return views.SettingsView{}, err
	}
	v := views.SettingsView{
		Form:       settingsForm(a.Account),
		Members:    members,
		MemberForm: newMemberForm(),
		KeyName:    newKeyField(),
		Junk:       jf,
	}
	for _, k := range keys {
		v.Keys = append(v.Keys, views.KeyItem{
			ID: k.ID, Name: k.Name, Prefix: k.Prefix,
			Created:  h.formatTime(a.Account, &k.CreatedAt),
			LastUsed: orNever(h.formatTime(a.Account, k.LastUsedAt)),
			Revoked:  h.formatTime(a.Account, k.RevokedAt),
		})
	}
	return v, nil
}

func (h *Handler) renderSettings(c echo.Context, status int, v views.SettingsView) error {
	p := h.page(c, "Settings")
	p.Nav = "settings"
	return render(c, status, views.SettingsPage(p, v))
}

func (h *Handler) showSettings(c echo.Context) error {
	v, err := h.settingsView(c)
	if err != nil {
		return err
	}
	sess := session(c)
	if nk, ok := sess.Values[keyNewKey].(string); ok {
		v.NewKeyName, v.NewKey, _ = strings.Cut(nk, "\x00")
		delete(sess.Values, keyNewKey)
		c.Set(ctxDirty, true)
		c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	}
	if _, ok := sess.Values[keyJunkSaved]; ok {
		v.Junk.Saved = true
		delete(sess.Values, keyJunkSaved)
		c.Set(ctxDirty, true)
	}
	return h.renderSettings(c, http.StatusOK, v)
}

func (h *Handler) updateSettings(c echo.Context) error {
	a := currentAccount(c).Account
	a.Name = strings.TrimSpace(c.FormValue("name"))
	a.Timezone = strings.TrimSpace(c.FormValue("timezone"))
	a.DefaultCountry = strings.ToUpper(strings.TrimSpace(c.FormValue("default_country")))
	a.Currency = strings.ToUpper(strings.TrimSpace(c.FormValue("currency")))
	a.CRMName = strings.TrimSpace(c.FormValue("crm_name"))
	a.WebsiteURL = strings.TrimSpace(c.FormValue("website_url"))

	f := settingsForm(a)
	f.Name.Error = validName(a.Name)
	if !country.ValidTimezone(a.Timezone) {
		f.Timezone.Error = "Enter an IANA time zone, like America/New_York or UTC."
	}
	if a.DefaultCountry != "" && !country.Valid(a.DefaultCountry) {
		f.DefaultCountry.Error = "Choose a country from the list."
	}
	if !country.ValidCurrency(a.Currency) {
		f.Currency.Error = "Enter a three-letter ISO 4217 code, like USD or EUR."
	}
	if len(a.CRMName) > 100 {
		f.CRMName.Error = "Use at most 100 characters."
	}
	if p := capture.WebsiteURLProblem(a.WebsiteURL); p != "" {
		f.WebsiteURL.Error = capitalize(p) + "."
	}
	invalid := f.Name.Error != "" || f.Timezone.Error != "" || f.DefaultCountry.Error != "" || f.Currency.Error != "" ||
		f.CRMName.Error != "" || f.WebsiteURL.Error != ""

	if !invalid {
		saved, err := h.store.UpdateAccountSettings(c.Request().Context(), a)
		if err != nil {
			return err
		}
		f = settingsForm(saved)
		currentAccount(c).Account = saved
	}
	status := http.StatusOK
	if invalid {
		status = http.StatusUnprocessableEntity
	}
	if isHTMX(c) {
		p := h.page(c, "Settings")
		if !invalid {
			p.Flashes = append([]views.Flash{{Kind: "ok", Message: "Settings saved."}}, p.Flashes...)
		}
		return render(c, status, views.SettingsFormView(p, f))
	}
	if invalid {
		v, err := h.settingsView(c)
		if err != nil {
			return err
		}
		v.Form = f
		return h.renderSettings(c, status, v)
	}
	setFlash(c, "ok", "Settings saved.")
	return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/settings"))
}

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
	var u models.User
	if mf.Email.Value == "" {
		mf.Email.Error = "Enter the email of an existing user."
	} else {
		var err error
		u, err = h.store.UserByEmail(ctx, mf.Email.Value)
		switch {
		case errors.Is(err, store.ErrNotFound):
			mf.Email.Error = "No user has this email. An administrator can create the user first."
		case err != nil:
			return err
		}
	}
	if mf.Email.Error != "" || mf.Role.Error != "" {
		return h.memberFormError(c, mf)
	}
	if err := h.store.SetMember(ctx, a.ID, u.ID, role); err != nil {
		if errors.Is(err, store.ErrLastOwner) {
			mf.Error = "The account needs at least one owner: make someone else owner first."
			return h.memberFormError(c, mf)
		}
		return err
	}
	setFlash(c, "ok", u.Email+" is now "+string(role)+".")
	return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/settings"))
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

// afterMemberChange returns to the settings page, or to the account list
// when the owner just removed or demoted themselves out of settings.
func (h *Handler) afterMemberChange(c echo.Context, changed int64) error {
	a := currentAccount(c)
	if changed == currentUser(c).ID {
		if _, err := h.store.AccountForUser(c.Request().Context(), changed, a.ID); err != nil {
			return c.Redirect(http.StatusSeeOther, "/accounts")
		}
		return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, ""))
	}
	return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/settings"))
}

func (h *Handler) memberFormError(c echo.Context, mf views.MemberForm) error {
	v, err := h.settingsView(c)
	if err != nil {
		return err
	}
	v.MemberForm = mf
	return h.renderSettings(c, http.StatusUnprocessableEntity, v)
}

func orNever(s string) string {
	if s == "" {
		return "never"
	}
	return s
}
