package web

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

func (h *Handler) leadParam(c echo.Context) (models.Lead, error) {
	id, err := strconv.ParseInt(c.Param("lead"), 10, 64)
	if err != nil {
		return models.Lead{}, store.ErrNotFound
	}
	return h.store.Lead(c.Request().Context(), currentAccount(c).ID, id)
}

func newStageForm(a models.Account, stages []models.Stage) views.StageForm {
	f := views.StageForm{
		Stage:    views.Field{Name: "stage", Label: "Stage"},
		Value:    views.Field{Name: "value", Label: "Value (a deal's)", Type: "number"},
		Currency: views.Field{Name: "currency", Label: "Currency", Value: a.Currency},
	}
	for _, st := range stages {
		f.Options = append(f.Options, views.Option{Value: st.Name, Label: st.Name})
	}
	if len(stages) > 0 {
		f.Stage.Value = stages[0].Name
	}
	return f
}

// stageForm is the set-stage form of the account's stages.
func (h *Handler) stageForm(ctx context.Context, a models.Account) (views.StageForm, []models.Stage, error) {
	stages, err := h.store.Stages(ctx, a.ID)
	return newStageForm(a, stages), stages, err
}

func (h *Handler) showLead(c echo.Context) error {
	l, err := h.leadParam(c)
	if err != nil {
		return err
	}
	form, _, err := h.stageForm(c.Request().Context(), currentAccount(c).Account)
	if err != nil {
		return err
	}
	ix, err := h.stageNames(c.Request().Context(), currentAccount(c).ID)
	if err != nil {
		return err
	}
	if st, ok := ix.Resolve(l.Stage); ok {
		form.Stage.Value = st // the select starts at the lead's stage
	}
	return h.renderLead(c, http.StatusOK, l, form)
}

// renderLead shows a lead: who they are and what they wrote, what
// happened to them, the stage buttons and rules, then its match keys.
func (h *Handler) renderLead(c echo.Context, status int, l models.Lead, form views.StageForm) error {
	ctx := c.Request().Context()
	a := currentAccount(c).Account
	now, loc := h.now(), location(a)
	v := views.LeadView{
		Title:    views.LeadName(l),
		Email:    l.Email,
		Phone:    l.Phone,
		Message:  l.Message,
		Source:   views.SourceLabel(l.Source),
		Partial:  l.Partial,
		Test:     l.Test,
		Campaign: store.Campaign(l.EventSourceURL),
		Page:     l.EventSourceURL,
		Captured: views.NewStamp(l.CreatedAt, now, loc),
		Junk:     l.Junk,
		Override: l.JunkOverride,
		Form:     form,
		Raw:      rawFields(l),
	}
	v.Company, v.Said = saidFields(l)
	if l.Stage != "" {
		ix, err := h.stageNames(ctx, a.ID)
		if err != nil {
			return err
		}
		v.Stage = stageWords(ix, l.Stage)
	}
	var keys normalize.Keys
	_ = json.Unmarshal([]byte(l.MatchKeys), &keys)
	v.Keys = keyRows(keys)
	v.Missing = keys.Missing()
	for _, p := range keys.Problems {
		v.Problems = append(v.Problems, views.ProblemRow{Field: p.Field, Value: p.Value, Reason: p.Reason})
	}
	changes, err := h.store.StageChanges(ctx, a.ID, l.ID)
	if err != nil {
		return err
	}
	evs, err := h.store.LeadEvents(ctx, a.ID, l.ID)
	if err != nil {
		return err
	}
	datasets, err := h.store.Datasets(ctx, a.ID)
	if err != nil {
		return err
	}
	rules, err := h.store.SendRules(ctx, a.ID)
	if err != nil {
		return err
	}
	v.Rules = h.leadRuleRows(a, currentAccount(c).Role, l, rules, datasets, evs)
	v.Timeline, err = h.leadTimeline(ctx, a, l, changes, evs, datasets)
	if err != nil {
		return err
	}
	p := h.page(c, v.Title)
	p.Nav = "leads"
	p.Lead = l.ID
	return render(c, status, views.LeadPage(p, v))
}

func keyRows(k normalize.Keys) []views.KeyRow {
	hashed := []struct {
		name, label string
		key         normalize.Key
	}{
		{"em", "email", k.Email}, {"ph", "phone", k.Phone}, {"fn", "first name", k.FirstName}, {"ln", "last name", k.LastName},
		{"ct", "city", k.City}, {"st", "state", k.State}, {"zp", "zip", k.Zip}, {"country", "country", k.Country},
		{"ge", "gender", k.Gender}, {"db", "date of birth", k.DateOfBirth}, {"external_id", "external id", k.ExternalID},
	}
	var rows []views.KeyRow
	for _, h := range hashed {
		if h.key.Hash != "" {
			rows = append(rows, views.KeyRow{Name: h.name, Label: h.label, Normalized: h.key.Normalized, Hash: h.key.Hash, Hashed: true})
		}
	}
	for _, u := range []struct{ name, label, value string }{
		{"client_ip_address", "visitor IP", k.ClientIP}, {"client_user_agent", "visitor browser", k.UserAgent},
		{"fbc", "click id", k.FBC}, {"fbp", "browser id", k.FBP},
	} {
		if u.value != "" {
			label := u.label
			if u.name == "fbc" && k.FBCRebuilt {
				label += " (rebuilt from fbclid)"
			}
			rows = append(rows, views.KeyRow{Name: u.name, Label: label, Normalized: u.value})
		}
	}
	return rows
}

// companyFields are the names a form gives its company field.
var companyFields = []string{"company", "company_name", "companyname", "business", "organization", "organisation"}

// saidFields are a lead's custom form fields (stored as text) with human
// labels, in name order, less its company (a field named like one of
// companyFields), which the page shows with the contact.
func saidFields(l models.Lead) (company string, rows []views.FieldRow) {
	var custom map[string]string
	_ = json.Unmarshal([]byte(l.Fields), &custom)
	names := make([]string, 0, len(custom))
	for k := range custom {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if company == "" && slices.Contains(companyFields, strings.ToLower(k)) {
			company = custom[k]
			continue
		}
		rows = append(rows, views.FieldRow{Name: fieldLabel(k), Value: custom[k]})
	}
	return company, rows
}

// fieldLabel is a form field's name as a label: "budget_range" reads
// "Budget range".
func fieldLabel(name string) string {
	s := strings.TrimSpace(strings.NewReplacer("_", " ", "-", " ").Replace(name))
	if s == "" {
		return name
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// rawFields are every field of a lead as it was posted, with human
// labels, custom fields last.
func rawFields(l models.Lead) []views.FieldRow {
	var rows []views.FieldRow
	add := func(name, value string) {
		if value != "" {
			rows = append(rows, views.FieldRow{Name: name, Value: value})
		}
	}
	if l.ExternalID != nil {
		add("Your id (external_id)", *l.ExternalID)
	}
	add("Source", views.SourceLabel(l.Source))
	if l.Partial {
		add("Partial", "yes: sent before the form was complete")
	}
	add("Email", l.Email)
	add("Phone", l.Phone)
	add("First name", l.FirstName)
	add("Last name", l.LastName)
	add("City", l.City)
	add("State", l.State)
	add("ZIP", l.Zip)
	add("Country", l.Country)
	add("Gender", l.Gender)
	add("Date of birth", l.DateOfBirth)
	add("Message", l.Message)
	add("Facebook click id (fbclid)", l.FBCLID)
	add("Click cookie (fbc)", l.FBC)
	add("Browser cookie (fbp)", l.FBP)
	add("Visitor IP", l.ClientIP)
	add("Visitor browser", l.ClientUserAgent)
	add("Page", l.EventSourceURL)
	if l.FillSeconds != nil {
		add("Time to fill the form", strconv.FormatFloat(*l.FillSeconds, 'f', -1, 64)+" s")
	}
	add("Hidden trap field (honeypot)", l.Honeypot)
	add("Meta lead id", l.MetaLeadID)
	company, said := saidFields(l)
	if company != "" {
		add("Company", company)
	}
	for _, f := range said {
		add(f.Name+" (form field)", f.Value)
	}
	return rows
}
