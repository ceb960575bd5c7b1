package web

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/capture"
	"github.com/leadsignal/leadsignal/internal/country"
	"github.com/leadsignal/leadsignal/models"
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

// settingsPage is the page around a settings section.
func (h *Handler) settingsPage(c echo.Context, title string) views.Page {
	p := h.page(c, title)
	p.Nav = "settings"
	return p
}

// showSettings is the settings' account section.
func (h *Handler) showSettings(c echo.Context) error {
	return render(c, http.StatusOK, views.SettingsPage(h.settingsPage(c, "Settings"), settingsForm(currentAccount(c).Account)))
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
		return render(c, status, views.SettingsPage(h.settingsPage(c, "Settings"), f))
	}
	setFlash(c, "ok", "Settings saved.")
	return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/settings"))
}
