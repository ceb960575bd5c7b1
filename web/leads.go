package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/country"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/junk"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/overview"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

const leadsPageSize = 50

// location is the account's time zone, UTC when it cannot be loaded.
func location(a models.Account) *time.Location {
	if loc, err := time.LoadLocation(a.Timezone); err == nil {
		return loc
	}
	return time.UTC
}

// formatTime shows a time in the account's zone; "" for nil.
func (h *Handler) formatTime(a models.Account, t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.In(location(a)).Format("2006-01-02 15:04")
}

// parseLeadFilter reads the list filters from the query string. Dates are
// whole days in the account's time zone; "to" includes its day.
func parseLeadFilter(c echo.Context, a models.Account, stages []overview.Stage, written []string) (store.LeadFilter, views.LeadFilter) {
	q := c.QueryParams()
	vf := views.LeadFilter{
		From: q.Get("from"), To: q.Get("to"), Junk: q.Get("junk"), Source: q.Get("source"),
		Partial: q.Get("partial"), Stage: q.Get("stage"), Query: strings.TrimSpace(q.Get("q")),
		Campaign: q.Get("campaign"), Reached: q.Get("reached"),
	}
	f := store.LeadFilter{Query: vf.Query}
	// A whole email address finds its leads by the email's hash, from an
	// index: a substring search reads every lead of the account.
	if strings.Contains(vf.Query, "@") {
		if email, ok := normalize.Email(vf.Query); ok {
			f.Query, f.EmailHash = "", normalize.Hash(email)
		}
	}
	f.From, f.To, vf.Error = dayRange(vf.From, vf.To, location(a))
	if vf.Junk == "junk" || vf.Junk == "clean" {
		f.Junk = vf.Junk
	}
	if models.Source(vf.Source).Valid() {
		f.Source = models.Source(vf.Source)
	}
	if vf.Partial == "yes" || vf.Partial == "no" {
		f.Partial = vf.Partial
	}
	if vf.Stage != "" {
		f.Stage = vf.Stage
	}
	f.Campaign = vf.Campaign
	if vf.Reached != "" {
		// None (not nil) when no lead reached it: the list is empty.
		f.Stages = append([]string{}, overview.AtOrAfter(stages, vf.Reached, written)...)
	}
	return f, vf
}

// reachedStages reads the account's stages, and the stages its leads are
// at as written, when the list is filtered to the leads that reached one
// (nothing otherwise).
func (h *Handler) reachedStages(c echo.Context) ([]overview.Stage, []string, error) {
	if c.QueryParam("reached") == "" {
		return nil, nil, nil
	}
	ctx := c.Request().Context()
	stages, err := h.accountStages(ctx, currentAccount(c).ID)
	if err != nil {
		return nil, nil, err
	}
	written, err := h.store.LeadStages(ctx, currentAccount(c).ID)
	return stages, written, err
}

// accountStages lists the account's stages in order with their enabled
// mappings.
func (h *Handler) accountStages(ctx context.Context, accountID int64) ([]overview.Stage, error) {
	stages, err := h.store.Stages(ctx, accountID)
	if err != nil {
		return nil, err
	}
	rules, err := h.store.SendRules(ctx, accountID)
	if err != nil {
		return nil, err
	}
	return overview.Stages(stages, rules), nil
}

// dayRange reads a From and a To date (YYYY-MM-DD, whole days in loc, To
// included) into [from, to); zero times for empty or unreadable dates,
// with a message naming the unreadable ones.
func dayRange(fromS, toS string, loc *time.Location) (from, to time.Time, problem string) {
	var bad []string
	// A date is read as a calendar date, then placed at its first instant
	// in loc: a zone may skip its midnight.
	if fromS != "" {
		t, err := time.Parse("2006-01-02", fromS)
		if err != nil {
			bad = append(bad, "the From date")
		} else {
			from = store.DayStart(t.Year(), t.Month(), t.Day(), loc)
		}
	}
	if toS != "" {
		t, err := time.Parse("2006-01-02", toS)
		if err != nil {
			bad = append(bad, "the To date")
		} else {
			to = store.DayStart(t.Year(), t.Month(), t.Day()+1, loc)
		}
	}
	if len(bad) > 0 {
		problem = "Could not read " + strings.Join(bad, " and ") + "; use YYYY-MM-DD."
	}
	return from, to, problem
}

// filterQuery is the query string of the current filters, without paging.
func filterQuery(c echo.Context) url.Values {
	q := url.Values{}
	for _, k := range []string{"from", "to", "junk", "source", "partial", "stage", "q", "campaign", "reached"} {
		if v := c.QueryParam(k); v != "" {
			q.Set(k, v)
		}
	}
	return q
}

func parseCursor(s string) *store.LeadCursor {
	ns, id, ok := strings.Cut(s, "_")
	if !ok {
		return nil
	}
	n, err1 := strconv.ParseInt(ns, 10, 64)
	i, err2 := strconv.ParseInt(id, 10, 64)
	if err1 != nil || err2 != nil {
		return nil
	}
	return &store.LeadCursor{CreatedAt: time.Unix(0, n), ID: i}
}

func (h *Handler) showLeads(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	stages, written, err := h.reachedStages(c)
	if err != nil {
		return err
	}
	f, vf := parseLeadFilter(c, a.Account, stages, written)
	after := parseCursor(c.QueryParam("after"))
	// One extra row says whether another page exists.
	leads, err := h.store.Leads(ctx, a.ID, f, after, leadsPageSize+1)
	if err != nil {
		return err
	}
	next := ""
	if len(leads) > leadsPageSize {
		leads = leads[:leadsPageSize]
		last := leads[len(leads)-1]
		q := filterQuery(c)
		q.Set("after", fmt.Sprintf("%d_%d", last.CreatedAt.UnixNano(), last.ID))
		next = views.AccountURL(a.ID, "/leads?"+q.Encode())
	}
	rows := make([]views.LeadRow, 0, len(leads))
	for _, l := range leads {
		rows = append(rows, h.leadRow(a.Account, l))
	}
	p := h.page(c, "Leads")
	p.Nav = "leads"
	if isHTMX(c) && after != nil {
		return render(c, http.StatusOK, views.LeadRows(p, rows, next))
	}
	total, err := h.store.CountLeads(ctx, a.ID, f, int(vf.CountCap())+1)
	if err != nil {
		return err
	}
	csvQuery := filterQuery(c).Encode()
	v := views.LeadsView{
		Filter: vf, Rows: rows, Total: total, NextURL: next,
		CSVURL:   views.AccountURL(a.ID, "/leads.csv?"+csvQuery),
		Filtered: csvQuery != "",
		Example:  curlExample(c),
	}
	return render(c, http.StatusOK, views.LeadsPage(p, v))
}

func curlExample(c echo.Context) string {
	base := c.Scheme() + "://" + c.Request().Host
	return `curl -X POST ` + base + `/api/v1/leads \
  -H "Authorization: Bearer $LEADSIGNAL_KEY" \
  -H "Content-Type: application/json" \
  -d '{"external_id":"form-123","email":"jane@example.com","phone":"(415) 555-0132",
       "first_name":"Jane","client_ip_address":"203.0.113.7",
       "client_user_agent":"Mozilla/5.0 ...","event_source_url":"https://example.com/quote"}'`
}

func (h *Handler) leadRow(a models.Account, l models.Lead) views.LeadRow {
	var reasons []junk.Reason
	_ = json.Unmarshal([]byte(l.JunkReasons), &reasons)
	r := views.LeadRow{
		Lead: l, Created: h.formatTime(a, &l.CreatedAt), CreatedISO: l.CreatedAt.UTC().Format(time.RFC3339),
		Name: strings.TrimSpace(l.FirstName + " " + l.LastName),
	}
	for _, rs := range reasons {
		r.JunkReasons = append(r.JunkReasons, rs.Message)
	}
	return r
}

func (h *Handler) exportLeads(c echo.Context) error {
	a := currentAccount(c)
	stages, written, err := h.reachedStages(c)
	if err != nil {
		return err
	}
	f, _ := parseLeadFilter(c, a.Account, stages, written)
	w := startCSV(c, fmt.Sprintf("leads-%s-%s.csv", a.Slug, h.now().In(location(a.Account)).Format("2006-01-02")))
	header := []string{"lead_id", "created_at", "external_id", "source", "partial", "email", "phone", "first_name", "last_name",
		"city", "state", "zip", "country", "stage", "junk", "junk_reasons", "message", "event_source_url", "meta_lead_id"}
	if err := w.Write(header); err != nil {
		return err
	}
	err = h.store.EachLead(c.Request().Context(), a.ID, f, func(l models.Lead) error {
		var reasons []junk.Reason
		_ = json.Unmarshal([]byte(l.JunkReasons), &reasons)
		names := make([]string, 0, len(reasons))
		for _, r := range reasons {
			names = append(names, string(r.Signal))
		}
		ext := ""
		if l.ExternalID != nil {
			ext = *l.ExternalID
		}
		rec := []string{strconv.FormatInt(l.ID, 10), l.CreatedAt.UTC().Format(time.RFC3339), ext, string(l.Source),
			strconv.FormatBool(l.Partial), l.Email, l.Phone, l.FirstName, l.LastName, l.City, l.State, l.Zip, l.Country,
			l.Stage, strconv.FormatBool(l.Junk), strings.Join(names, " "), l.Message, l.EventSourceURL, l.MetaLeadID}
		return w.Write(rec)
	})
	return w.Close(err)
}

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
	if l.Stage != "" {
		form.Stage.Value = l.Stage // the select starts at the lead's stage
	}
	return h.renderLead(c, http.StatusOK, l, form)
}

func (h *Handler) renderLead(c echo.Context, status int, l models.Lead, form views.StageForm) error {
	ctx := c.Request().Context()
	a := currentAccount(c).Account
	changes, err := h.store.StageChanges(ctx, a.ID, l.ID)
	if err != nil {
		return err
	}
	v := views.LeadView{
		Title:    leadTitle(l),
		Captured: h.formatTime(a, &l.CreatedAt),
		Override: l.JunkOverride,
		Junk:     l.Junk,
		Stage:    l.Stage,
		Form:     form,
	}
	var keys normalize.Keys
	_ = json.Unmarshal([]byte(l.MatchKeys), &keys)
	v.Keys = keyRows(keys)
	v.Missing = keys.Missing()
	for _, p := range keys.Problems {
		v.Problems = append(v.Problems, views.ProblemRow{Field: p.Field, Value: p.Value, Reason: p.Reason})
	}
	var reasons []junk.Reason
	_ = json.Unmarshal([]byte(l.JunkReasons), &reasons)
	for _, r := range reasons {
		v.Reasons = append(v.Reasons, views.FieldRow{Name: string(r.Signal), Value: r.Message})
	}
	v.Raw = rawFields(l)
	evs, err := h.store.LeadEvents(ctx, a.ID, l.ID)
	if err != nil {
		return err
	}
	datasets, err := h.store.Datasets(ctx, a.ID)
	if err != nil {
		return err
	}
	if len(evs) > 0 {
		v.Events = h.eventRows(a, evs, datasets)
	}
	rules, err := h.store.SendRules(ctx, a.ID)
	if err != nil {
		return err
	}
	v.Rules = h.leadRuleRows(a, currentAccount(c).Role, l, rules, datasets, evs)
	var custom map[string]string
	_ = json.Unmarshal([]byte(l.Fields), &custom)
	names := make([]string, 0, len(custom))
	for k := range custom {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		v.Custom = append(v.Custom, views.FieldRow{Name: k, Value: custom[k]})
	}
	users := map[int64]string{}
	for _, sc := range changes {
		row := views.StageRow{Stage: sc.Stage, When: h.formatTime(a, &sc.OccurredAt), WhenISO: sc.OccurredAt.UTC().Format(time.RFC3339), By: "API"}
		if sc.Value != nil {
			row.Value = views.StageValue(*sc.Value, sc.Currency)
		}
		if sc.UserID != nil {
			name, ok := users[*sc.UserID]
			if !ok {
				if u, err := h.store.UserByID(ctx, *sc.UserID); err == nil {
					name = u.Email
				}
				users[*sc.UserID] = name
			}
			row.By = name
		}
		v.Stages = append(v.Stages, row)
	}
	p := h.page(c, v.Title)
	p.Nav = "leads"
	p.Lead = l.ID
	return render(c, status, views.LeadPage(p, v))
}

func leadTitle(l models.Lead) string {
	for _, s := range []string{strings.TrimSpace(l.FirstName + " " + l.LastName), l.Email, l.Phone} {
		if s != "" {
			return s
		}
	}
	return "Lead " + strconv.FormatInt(l.ID, 10)
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

func rawFields(l models.Lead) []views.FieldRow {
	var rows []views.FieldRow
	add := func(name, value string) {
		if value != "" {
			rows = append(rows, views.FieldRow{Name: name, Value: value})
		}
	}
	if l.ExternalID != nil {
		add("external_id", *l.ExternalID)
	}
	add("source", string(l.Source))
	if l.Partial {
		add("partial", "yes")
	}
	add("email", l.Email)
	add("phone", l.Phone)
	add("first_name", l.FirstName)
	add("last_name", l.LastName)
	add("city", l.City)
	add("state", l.State)
	add("zip", l.Zip)
	add("country", l.Country)
	add("gender", l.Gender)
	add("date_of_birth", l.DateOfBirth)
	add("message", l.Message)
	add("fbclid", l.FBCLID)
	add("fbc", l.FBC)
	add("fbp", l.FBP)
	add("client_ip_address", l.ClientIP)
	add("client_user_agent", l.ClientUserAgent)
	add("event_source_url", l.EventSourceURL)
	if l.FillSeconds != nil {
		add("fill_seconds", strconv.FormatFloat(*l.FillSeconds, 'f', -1, 64))
	}
	add("honeypot", l.Honeypot)
	add("meta_lead_id", l.MetaLeadID)
	return rows
}

// addLeadStage records a person's stage change or junk verdict on a lead,
// through the path the stage API takes (decide.Decider.Record), and says
// which events it queued.
func (h *Handler) addLeadStage(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	l, err := h.leadParam(c)
	if err != nil {
		return err
	}
	form, stages, err := h.stageForm(ctx, a.Account)
	if err != nil {
		return err
	}
	stage := c.FormValue("stage")
	form.Stage.Value = stage
	form.Value.Value = strings.TrimSpace(c.FormValue("value"))
	if cur := strings.ToUpper(strings.TrimSpace(c.FormValue("currency"))); cur != "" {
		form.Currency.Value = cur
	}
	switch i := slices.IndexFunc(stages, func(st models.Stage) bool { return strings.EqualFold(st.Name, stage) }); {
	case stage == models.StageJunk || stage == models.StageNotJunk:
	case i >= 0:
		stage = stages[i].Name
	default:
		form.Stage.Error = "Choose one of the account's stages."
	}
	sc := models.StageChange{AccountID: a.ID, LeadID: l.ID, Stage: stage, OccurredAt: h.now().UTC(), UserID: &currentUser(c).ID}
	if form.Value.Value != "" {
		if v, ok := rule.Amount(form.Value.Value); ok {
			sc.Value = &v
		} else {
			form.Value.Error = "Enter an amount from 0 to 1,000,000,000,000 (a trillion), in digits, like 1250 or 99.90."
		}
	}
	// A value goes to Meta with its currency, whatever the stage.
	if form.Value.Value != "" && !country.ValidCurrency(form.Currency.Value) {
		form.Currency.Error = "Enter a three-letter ISO 4217 code, like USD."
	}
	if sc.Value != nil {
		sc.Currency = form.Currency.Value
	}
	if form.Value.Error == "" && form.Stage.Error == "" {
		rules, err := h.store.SendRules(ctx, a.ID)
		if err != nil {
			return err
		}
		if msg := decide.ChangeProblem(rules, sc); msg != "" {
			form.Value.Error = sentence(msg)
		}
	}
	if form.Stage.Error != "" || form.Value.Error != "" || form.Currency.Error != "" {
		return h.renderLead(c, http.StatusUnprocessableEntity, l, form)
	}
	_, evs, err := h.capture.Decider().Record(ctx, &sc)
	if err != nil && !errors.Is(err, store.ErrSameChange) {
		return err
	}
	msg := "Stage set to " + stage + "." + queuedText(evs)
	switch stage {
	case models.StageJunk:
		msg = "Marked as junk: it will not be sent to Meta."
	case models.StageNotJunk:
		msg = "Marked as not junk: it is eligible for sending like any other lead."
	}
	setFlash(c, "ok", msg)
	return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/leads/"+strconv.FormatInt(l.ID, 10)))
}

// queuedText names the events a stage change queued, in order, for the
// page's message: " Queued QualifiedLead (filled in), Purchase.", or ""
// for none.
func queuedText(evs []models.Event) string {
	if len(evs) == 0 {
		return ""
	}
	names := make([]string, len(evs))
	for i, e := range evs {
		names[i] = e.EventName
		if e.FilledIn {
			names[i] += " (filled in)"
		}
	}
	return " Queued " + strings.Join(names, ", ") + "."
}

// sendRuleEvent queues a manual send rule's event for a lead: its button
// on the lead page, for editors and owners.
func (h *Handler) sendRuleEvent(c echo.Context) error {
	a := currentAccount(c)
	l, err := h.leadParam(c)
	if err != nil {
		return err
	}
	ruleID, err := strconv.ParseInt(c.Param("rule"), 10, 64)
	if err != nil {
		return store.ErrNotFound
	}
	r, err := h.store.SendRule(c.Request().Context(), a.ID, ruleID)
	if err != nil {
		return err
	}
	queued, err := h.capture.Decider().SendManual(c.Request().Context(), a.ID, l.ID, r.ID, h.now().UTC())
	switch {
	case errors.Is(err, decide.ErrNotManual):
		setFlash(c, "error", "The rule "+r.Name+" is not an enabled manual rule.")
	case errors.Is(err, decide.ErrNoMatch):
		setFlash(c, "error", "This lead does not meet the conditions of "+r.Name+": nothing was sent.")
	case err != nil:
		return err
	case queued:
		setFlash(c, "ok", r.EventName+" queued for Meta by "+r.Name+".")
	default:
		setFlash(c, "ok", r.EventName+" was already queued for this lead by "+r.Name+": nothing is sent twice.")
	}
	return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/leads/"+strconv.FormatInt(l.ID, 10)))
}
