package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/junk"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/overview"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

const leadsPageSize = 50

// location is the account's time zone, UTC when it cannot be loaded.
func location(a models.Account) *time.Location {
	return store.Zone(a.Timezone)
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
		ReachedFrom: q.Get("reached_from"), ReachedTo: q.Get("reached_to"),
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
	switch {
	case vf.Reached != "" && (vf.ReachedFrom != "" || vf.ReachedTo != ""):
		// The leads that first reached the stage in those days, as the
		// Overview's stage rows count them.
		r := store.Reach{Labels: overview.Named(stages, vf.Reached, written)}
		var problem string
		r.From, r.To, problem = dayRange(vf.ReachedFrom, vf.ReachedTo, location(a))
		if problem != "" && vf.Error == "" {
			vf.Error = problem
		}
		if r.To.IsZero() {
			r.To = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		f.Reached = &r
	case vf.Reached != "":
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
	if from, to := c.QueryParam("reached_from"), c.QueryParam("reached_to"); from != "" || to != "" {
		f, t, _ := dayRange(from, to, location(currentAccount(c).Account))
		written, err := h.store.ReachedLabels(ctx, currentAccount(c).ID, f, t)
		return stages, written, err
	}
	written, err := h.store.LeadStages(ctx, currentAccount(c).ID)
	return stages, written, err
}

// accountStages lists the account's stages in order with their enabled
// mappings, each with its aliases and the CRM labels mapped to it: the
// labels changes are counted under.
func (h *Handler) accountStages(ctx context.Context, accountID int64) ([]overview.Stage, error) {
	stages, err := h.store.Stages(ctx, accountID)
	if err != nil {
		return nil, err
	}
	rules, err := h.store.SendRules(ctx, accountID)
	if err != nil {
		return nil, err
	}
	labels, err := h.store.MappedCRMStages(ctx, accountID)
	if err != nil {
		return nil, err
	}
	out := overview.Stages(stages, rules)
	for i := range out {
		for _, l := range labels {
			if strings.EqualFold(l.Stage, out[i].Name) {
				out[i].Aliases = append(out[i].Aliases, l.Label)
			}
		}
	}
	return out, nil
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
	for _, k := range []string{"from", "to", "junk", "source", "partial", "stage", "q", "campaign", "reached", "reached_from", "reached_to"} {
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
	ids := make([]int64, len(leads))
	for i, l := range leads {
		ids[i] = l.ID
	}
	sentAs, err := h.store.LeadsSentAs(ctx, a.ID, ids, h.now())
	if err != nil {
		return err
	}
	now, loc := h.now(), location(a.Account)
	rows := make([]views.LeadRow, 0, len(leads))
	names, err := h.stageNames(ctx, a.ID)
	if err != nil {
		return err
	}
	for _, l := range leads {
		r := leadRow(l, sentAs[l.ID], now, loc)
		// A stage recorded under an alias reads as its stage.
		r.Stage, _ = names.Resolve(l.Stage)
		rows = append(rows, r)
	}
	p := h.page(c, "Leads")
	p.Nav = "leads"
	if isHTMX(c) && after != nil {
		return render(c, http.StatusOK, views.LeadRows(p, rows, next))
	}
	// A first page that holds every match is its own count: a search for a
	// rare term then reads its matches once, not twice.
	total := int64(len(leads))
	if after != nil || next != "" {
		if total, err = h.store.CountLeads(ctx, a.ID, f, int(vf.CountCap())+1); err != nil {
			return err
		}
	}
	// The stage filter offers the stages leads are at, as their CRM wrote
	// them: the filter matches them exactly.
	if written == nil {
		if written, err = h.store.LeadStages(ctx, a.ID); err != nil {
			return err
		}
	}
	csvQuery := filterQuery(c).Encode()
	v := views.LeadsView{
		Stages: written,
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

// leadRow is a lead as the list shows it, with the events made for it.
func leadRow(l models.Lead, sentAs []store.SentAs, now time.Time, loc *time.Location) views.LeadRow {
	r := views.LeadRow{Lead: l, Stage: l.Stage, When: views.NewStamp(l.CreatedAt, now, loc)}
	for _, rs := range firedSignals(l) {
		r.JunkReasons = append(r.JunkReasons, rs.Message)
	}
	for _, e := range sentAs {
		r.SentAs = append(r.SentAs, views.SentAs{EventName: e.EventName, Status: e.Status})
	}
	return r
}

// firedSignals are the signals that fired when the lead was captured.
func firedSignals(l models.Lead) []junk.Reason {
	var reasons []junk.Reason
	_ = json.Unmarshal([]byte(l.JunkReasons), &reasons)
	return reasons
}

func (h *Handler) exportLeads(c echo.Context) error {
	a := currentAccount(c)
	stages, written, err := h.reachedStages(c)
	if err != nil {
		return err
	}
	f, _ := parseLeadFilter(c, a.Account, stages, written)
	w := startCSV(c, fmt.Sprintf("leads-%s-%s.csv", a.Slug, h.now().In(location(a.Account)).Format("2006-01-02")))
	cols := leadColumns
	if !a.Role.DownloadsContacts() {
		cols = slices.DeleteFunc(slices.Clone(cols), func(col leadColumn) bool { return col.contact })
	}
	header := make([]string, len(cols))
	for i, col := range cols {
		header[i] = col.name
	}
	if err := w.Write(header); err != nil {
		return err
	}
	err = h.store.EachLead(c.Request().Context(), a.ID, f, func(l models.Lead) error {
		rec := make([]string, len(cols))
		for i, col := range cols {
			rec[i] = col.value(l)
		}
		return w.Write(rec)
	})
	return w.Close(err)
}

// leadColumn is one column of the leads CSV. A contact column holds raw
// contact data (or may: an external_id is often an email), which leaves
// the server only in owners' and editors' downloads
// (models.Role.DownloadsContacts).
type leadColumn struct {
	name    string
	contact bool
	value   func(models.Lead) string
}

// leadColumns are the leads CSV's columns, in order.
var leadColumns = []leadColumn{
	{"lead_id", false, func(l models.Lead) string { return strconv.FormatInt(l.ID, 10) }},
	{"created_at", false, func(l models.Lead) string { return l.CreatedAt.UTC().Format(time.RFC3339) }},
	{"external_id", true, func(l models.Lead) string {
		if l.ExternalID == nil {
			return ""
		}
		return *l.ExternalID
	}},
	{"source", false, func(l models.Lead) string { return string(l.Source) }},
	{"partial", false, func(l models.Lead) string { return strconv.FormatBool(l.Partial) }},
	{"email", true, func(l models.Lead) string { return l.Email }},
	{"phone", true, func(l models.Lead) string { return l.Phone }},
	{"first_name", true, func(l models.Lead) string { return l.FirstName }},
	{"last_name", true, func(l models.Lead) string { return l.LastName }},
	{"city", true, func(l models.Lead) string { return l.City }},
	{"state", true, func(l models.Lead) string { return l.State }},
	{"zip", true, func(l models.Lead) string { return l.Zip }},
	{"country", true, func(l models.Lead) string { return l.Country }},
	{"stage", false, func(l models.Lead) string { return l.Stage }},
	{"junk", false, func(l models.Lead) string { return strconv.FormatBool(l.Junk) }},
	{"junk_reasons", false, func(l models.Lead) string {
		var reasons []junk.Reason
		_ = json.Unmarshal([]byte(l.JunkReasons), &reasons)
		names := make([]string, 0, len(reasons))
		for _, r := range reasons {
			names = append(names, string(r.Signal))
		}
		return strings.Join(names, " ")
	}},
	{"message", true, func(l models.Lead) string { return l.Message }},
	{"event_source_url", true, func(l models.Lead) string { return l.EventSourceURL }},
	{"meta_lead_id", true, func(l models.Lead) string { return l.MetaLeadID }},
	// test, last: added after the file's first columns were in use.
	{"test", false, func(l models.Lead) string { return strconv.FormatBool(l.Test) }},
}
