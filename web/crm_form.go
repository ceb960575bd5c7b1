package web

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// maxCRMSecret bounds a secret or token pasted into a connection's form.
const maxCRMSecret = 1000

// crmForm is a connection's form for conn as saved (a new one: its kind
// alone). Secrets are never put in it: their hints say whether one is
// saved. The form's steps (views.CRMFormPage) say where each secret is and
// what it does; the hints say how it is kept.
func crmForm(conn models.CRMConnection) views.CRMForm {
	kind := crm.Kind(conn.Kind)
	isNew := conn.ID == 0
	f := views.CRMForm{ID: conn.ID, Kind: conn.Kind, KindTitle: kind.Title(),
		Name: views.Field{Name: "name", Label: "Name", Required: true, Value: conn.Name,
			Hint: "Tells it apart from the account's other " + kind.Title() + " connections, like “Sales pipeline”."},
		Secret: views.Field{Name: "secret", Type: "password", Autocomplete: "new-password", Required: isNew,
			Hint: "Stored encrypted, and never shown again."},
	}
	chosen := "At least 16 characters, or leave it empty to have one made: it is shown once, on the next page."
	switch kind {
	case crm.HubSpot:
		f.Secret.Label = "App client secret"
		f.APIToken = views.Field{Name: "api_token", Label: "Private app access token", Type: "password", Autocomplete: "new-password",
			Hint: "Starts with pat-. Stored encrypted, and never shown again."}
		f.LeadIDProperty = views.Field{Name: "lead_id_property", Label: "Contact property holding Meta's lead id", Value: conn.LeadIDProperty,
			Hint: "Its internal name, like meta_lead_id, when your contacts keep the Instant Form's lead id; else leads are found by email, then phone."}
	case crm.Pipedrive:
		f.Secret.Label = "Webhook password"
		f.Secret.Hint = chosen
		f.APIToken = views.Field{Name: "api_token", Label: "API token", Type: "password", Autocomplete: "new-password",
			Hint: "Stored encrypted, and never shown again."}
		f.LeadIDProperty = views.Field{Name: "lead_id_property", Label: "Person field key holding Meta's lead id", Value: conn.LeadIDProperty,
			Hint: "The custom field's API key, when your persons keep the Instant Form's lead id; else leads are found by email, then phone."}
	default:
		f.Secret.Label = "Signing secret"
		f.Secret.Hint = chosen
		fields, _ := crm.StoredFields(conn.Fields)
		for _, t := range crm.Targets {
			f.Fields = append(f.Fields, views.Field{Name: "field_" + t, Label: t, Value: fields[t]})
		}
	}
	switch {
	case !isNew:
		f.Secret.Hint = "Now " + secretState(conn.SecretSealed, conn.SecretEnv) + ". Leave it empty to keep it; it is never shown."
		if f.APIToken.Name != "" {
			f.APIToken.Hint = "Now " + secretState(conn.APITokenSealed, conn.APITokenEnv) + ". Leave it empty to keep it; it is never shown."
		}
	case kind != crm.HubSpot:
		f.Secret.Required = false
	}
	return f
}

// crmInput is what a connection's form posted besides the fields it sets
// on the connection: the secrets typed ("" keeps the saved ones).
type crmInput struct {
	secret, apiToken string
}

// readCRMForm applies the posted form to conn and says what is wrong; the
// form keeps what was typed, except secrets.
func readCRMForm(c echo.Context, conn *models.CRMConnection) (views.CRMForm, crmInput, bool) {
	kind := crm.Kind(conn.Kind)
	conn.Name = strings.TrimSpace(c.FormValue("name"))
	in := crmInput{secret: strings.TrimSpace(c.FormValue("secret"))}
	if kind != crm.Generic {
		in.apiToken = strings.TrimSpace(c.FormValue("api_token"))
		conn.LeadIDProperty = strings.TrimSpace(c.FormValue("lead_id_property"))
	}
	fields := map[string]string{}
	if kind == crm.Generic {
		for _, t := range crm.Targets {
			if p := strings.TrimSpace(c.FormValue("field_" + t)); p != "" {
				fields[t] = p
			}
		}
		conn.Fields = crm.FieldsJSON(fields)
	}
	f := crmForm(*conn)
	f.Name.Value = conn.Name
	f.Name.Error = validName(conn.Name)
	f.Secret.Error = secretProblem(in.secret)
	if f.Secret.Error == "" && in.secret != "" {
		if msg := crm.SecretTooShort(in.secret); msg != "" {
			f.Secret.Error = sentence(msg)
			if kind != crm.HubSpot {
				f.Secret.Error += " Leave it empty to have one generated."
			}
		}
	}
	if f.Secret.Error == "" && conn.ID == 0 && in.secret == "" && kind == crm.HubSpot {
		f.Secret.Error = "Paste the app's client secret: HubSpot signs each delivery with it."
	}
	if f.APIToken.Name != "" {
		f.APIToken.Error = secretProblem(in.apiToken)
	}
	if !crm.ValidLeadIDProperty(conn.LeadIDProperty) {
		f.LeadIDProperty.Error = "Write the property's internal name or key, like meta_lead_id: letters, digits, _ . - only."
	}
	ok := f.Name.Error == "" && f.Secret.Error == "" && f.APIToken.Error == "" && f.LeadIDProperty.Error == ""
	// Each path is checked alone, so that its problem shows at its row.
	for i := range f.Fields {
		fd := &f.Fields[i]
		if p, set := fields[fd.Label]; set {
			if err := crm.CheckFields(map[string]string{fd.Label: p}); err != nil {
				fd.Error, ok = sentence(strings.TrimPrefix(err.Error(), fd.Label+": ")), false
			}
		}
	}
	if ok && kind == crm.Generic {
		if err := crm.CheckFields(fields); err != nil {
			f.FieldsError, ok = sentence(err.Error()), false
		}
	}
	return f, in, ok
}

// secretProblem says what is wrong with a pasted secret or token (a CRM
// connection's, a destination's); "" when it is fine or empty. It never
// repeats the secret. A control character would end up in a request
// header, which takes none.
func secretProblem(s string) string {
	switch {
	case !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
		return "A secret has no spaces: paste it again."
	case len(s) > maxCRMSecret:
		return fmt.Sprintf("At most %d characters: paste the secret alone.", maxCRMSecret)
	}
	return ""
}

// sealCRMSecrets encrypts the secrets typed into conn, bound to its
// token; an empty one keeps the saved one. A typed secret replaces one a
// setup file read from the environment.
func (h *Handler) sealCRMSecrets(conn *models.CRMConnection, in crmInput) {
	if in.secret != "" {
		conn.SecretSealed = h.box.Seal(in.secret, crm.SecretLabel(conn.Token))
		conn.SecretEnv = ""
	}
	if in.apiToken != "" {
		conn.APITokenSealed = h.box.Seal(in.apiToken, crm.APITokenLabel(conn.Token))
		conn.APITokenEnv = ""
	}
}

// crmProblem answers a connection's form again with what was typed and
// its problems. 422.
func (h *Handler) crmProblem(c echo.Context, conn models.CRMConnection, f views.CRMForm) error {
	title := "New " + f.KindTitle + " connection"
	if f.ID != 0 {
		title = "Edit " + f.Name.Value
	}
	return h.renderCRMForm(c, http.StatusUnprocessableEntity, title, conn, f)
}

// renderCRMForm answers connection conn's form f with its URL: the whole
// URL of a saved connection, the start of a new one's.
func (h *Handler) renderCRMForm(c echo.Context, status int, title string, conn models.CRMConnection, f views.CRMForm) error {
	var err error
	if f.HookURL, f.Guessed, err = h.hookURL(c, conn); err != nil {
		return err
	}
	p := h.page(c, title)
	p.Nav = "stages"
	return render(c, status, views.CRMFormPage(p, f))
}

// showNewCRMConnection is the form of a new connection of the kind asked
// for (?kind=hubspot).
func (h *Handler) showNewCRMConnection(c echo.Context) error {
	kind := crm.Kind(c.QueryParam("kind"))
	if !kind.Valid() {
		return store.ErrNotFound
	}
	conn := models.CRMConnection{Kind: string(kind)}
	return h.renderCRMForm(c, http.StatusOK, "New "+kind.Title()+" connection", conn, crmForm(conn))
}

// createCRMConnection adds a connection with a new token. A Pipedrive or
// generic one without a typed secret gets a generated one, which its page
// shows once.
func (h *Handler) createCRMConnection(c echo.Context) error {
	a := currentAccount(c)
	kind := crm.Kind(c.FormValue("kind"))
	if !kind.Valid() {
		return echo.NewHTTPError(http.StatusBadRequest, "Choose HubSpot, Pipedrive or Generic webhook.")
	}
	conn := models.CRMConnection{AccountID: a.ID, Kind: string(kind)}
	f, in, ok := readCRMForm(c, &conn)
	if !ok {
		return h.crmProblem(c, conn, f)
	}
	generated := in.secret == ""
	if generated {
		in.secret = crm.NewSecret()
	}
	// The seal labels name the token, which is made before the insert.
	conn.Token = store.NewCRMToken()
	h.sealCRMSecrets(&conn, in)
	err := h.store.CreateCRMConnection(c.Request().Context(), &conn)
	switch {
	case errors.Is(err, store.ErrConflict):
		f.Name.Error = "Another " + kind.Title() + " connection of this account has this name."
		return h.crmProblem(c, conn, f)
	case errors.Is(err, store.ErrCRMConnectionLimit):
		f.Error = fmt.Sprintf("An account has at most %d CRM connections: delete one it no longer needs first.", store.MaxCRMConnections)
		return h.crmProblem(c, conn, f)
	case err != nil:
		return err
	}
	h.log.Info("crm connection added", "account_id", a.ID, "connection_id", conn.ID, "kind", conn.Kind)
	if generated {
		if err := h.keepSecret(c, keyNewCRMSecret, fmt.Sprintf("%d\x00%s", conn.ID, in.secret)); err != nil {
			return err
		}
	}
	setFlash(c, "ok", "Connection "+conn.Name+" added. Paste its URL into "+kind.Title()+".")
	return redirect(c, crmURL(a.ID, conn.ID, ""))
}

// showEditCRMConnection is a connection's form; its kind never changes.
func (h *Handler) showEditCRMConnection(c echo.Context) error {
	conn, err := h.crmConnectionParam(c)
	if err != nil {
		return err
	}
	return h.renderCRMForm(c, http.StatusOK, "Edit "+conn.Name, conn, crmForm(conn))
}

// updateCRMConnection saves a connection's name, secrets typed, lead id
// property and mapping; its kind, token and URL stay.
func (h *Handler) updateCRMConnection(c echo.Context) error {
	a := currentAccount(c)
	conn, err := h.crmConnectionParam(c)
	if err != nil {
		return err
	}
	f, in, ok := readCRMForm(c, &conn)
	if !ok {
		return h.crmProblem(c, conn, f)
	}
	h.sealCRMSecrets(&conn, in)
	conn.UpdatedAt = h.now().UTC()
	err = h.store.SaveCRMConnection(c.Request().Context(), &conn)
	if errors.Is(err, store.ErrConflict) {
		f.Name.Error = "Another " + f.KindTitle + " connection of this account has this name."
		return h.crmProblem(c, conn, f)
	}
	if err != nil {
		return err
	}
	h.log.Info("crm connection saved", "account_id", a.ID, "connection_id", conn.ID)
	setFlash(c, "ok", "Connection "+conn.Name+" saved.")
	return redirect(c, crmURL(a.ID, conn.ID, ""))
}

// deleteCRMConnection asks first, then deletes a connection with its stage
// table and deliveries: its URL answers 404 from then on.
func (h *Handler) deleteCRMConnection(c echo.Context) error {
	a := currentAccount(c)
	conn, err := h.crmConnectionParam(c)
	if err != nil {
		return err
	}
	title := crm.Kind(conn.Kind).Title()
	if c.FormValue("confirm") != "yes" {
		p := h.page(c, "Delete "+conn.Name)
		p.Nav = "stages"
		return render(c, http.StatusOK, views.RuleConfirmPage(p, views.RuleConfirm{
			Title:   "Delete the " + title + " connection " + conn.Name + "?",
			Message: "Its URL will answer 404: " + title + "'s deliveries to it are refused from then on.",
			Detail:  "Its stage table and the deliveries it received are deleted; the stage changes they recorded stay on their leads.",
			Action:  crmURL(a.ID, conn.ID, "/delete"), Button: "Delete the connection", Cancel: crmURL(a.ID, conn.ID, "/edit"), Danger: true,
		}))
	}
	if err := h.store.DeleteCRMConnection(c.Request().Context(), a.ID, conn.ID); err != nil {
		return err
	}
	h.log.Info("crm connection deleted", "account_id", a.ID, "connection_id", conn.ID)
	setFlash(c, "ok", "Connection "+conn.Name+" deleted.")
	return redirect(c, views.AccountURL(a.ID, "/stages#crm"))
}
