package web

import (
	"bytes"
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

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

const eventsPageSize = 50

func parseEventFilter(c echo.Context, a models.Account) (store.EventFilter, views.SendLogFilter) {
	q := c.QueryParams()
	vf := views.SendLogFilter{Status: q.Get("status"), Event: strings.TrimSpace(q.Get("event")), Dataset: q.Get("dataset"), From: q.Get("from"), To: q.Get("to")}
	f := store.EventFilter{EventName: vf.Event}
	for _, s := range models.EventStatuses {
		if string(s) == vf.Status {
			f.Status = s
		}
	}
	if id, err := strconv.ParseInt(vf.Dataset, 10, 64); err == nil {
		f.DatasetID = id
	}
	f.From, f.To, vf.Error = dayRange(vf.From, vf.To, location(a))
	// The events of some leads: the Overview's links.
	vf.LeadFrom, vf.LeadTo, vf.Source, vf.Campaign = q.Get("lead_from"), q.Get("lead_to"), q.Get("source"), q.Get("campaign")
	if vf.LeadFrom != "" || vf.LeadTo != "" || vf.Source != "" || vf.Campaign != "" {
		lf := store.LeadFilter{Campaign: vf.Campaign}
		var problem string
		lf.From, lf.To, problem = dayRange(vf.LeadFrom, vf.LeadTo, location(a))
		if problem != "" && vf.Error == "" {
			vf.Error = problem
		}
		if models.Source(vf.Source).Valid() {
			lf.Source = models.Source(vf.Source)
		}
		f.Leads = &lf
	}
	return f, vf
}

func eventQuery(c echo.Context) url.Values {
	q := url.Values{}
	for _, k := range []string{"status", "stored", "event", "dataset", "from", "to", "lead_from", "lead_to", "source", "campaign"} {
		if v := c.QueryParam(k); v != "" {
			q.Set(k, v)
		}
	}
	return q
}

func (h *Handler) showEvents(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	f, vf := parseEventFilter(c, a.Account)
	var after *store.EventCursor
	if ns, id, ok := strings.Cut(c.QueryParam("after"), "_"); ok {
		n, err1 := strconv.ParseInt(ns, 10, 64)
		i, err2 := strconv.ParseInt(id, 10, 64)
		if err1 == nil && err2 == nil {
			after = &store.EventCursor{CreatedAt: time.Unix(0, n), ID: i}
		}
	}
	evs, err := h.store.Events(ctx, a.ID, f, after, eventsPageSize+1)
	if err != nil {
		return err
	}
	next := ""
	if len(evs) > eventsPageSize {
		evs = evs[:eventsPageSize]
		last := evs[len(evs)-1]
		q := eventQuery(c)
		q.Set("after", fmt.Sprintf("%d_%d", last.CreatedAt.UnixNano(), last.ID))
		next = views.AccountURL(a.ID, "/events?"+q.Encode())
	}
	datasets, err := h.store.Datasets(ctx, a.ID)
	if err != nil {
		return err
	}
	rows := h.eventRows(a.Account, evs, datasets)
	if err := h.nameLeads(c, a.ID, rows); err != nil {
		return err
	}
	p := h.page(c, "Send log")
	p.Nav = "events"
	if isHTMX(c) && after != nil {
		return render(c, http.StatusOK, views.EventRows(p, rows, next))
	}
	counts, err := h.store.EventCounts(ctx, a.ID, f, views.CountCap+1)
	if err != nil {
		return err
	}
	rules, err := h.store.SendRules(ctx, a.ID)
	if err != nil {
		return err
	}
	v := views.SendLogView{Filter: vf, Rows: rows, NextURL: next, Datasets: datasets, EventNames: eventNames(rules),
		RefreshURL: views.AccountURL(a.ID, "/events?"+eventQuery(c).Encode()),
		CSVURL:     views.AccountURL(a.ID, "/events.csv?"+eventQuery(c).Encode())}
	if counts[models.EventFailed]+counts[models.EventHeldBack] > 0 && a.Role.AtLeast(models.RoleEditor) {
		// Only these two may go on a retry: not sent events are queued
		// again by the lead's own changes, expired ones never.
		if v.CanRetry, err = dispatch.AnyRetryable(ctx, h.store, h.decider.Matchers, a.ID, h.now()); err != nil {
			return err
		}
	}
	for _, s := range models.EventStatuses {
		v.Counts = append(v.Counts, views.StatusCount{Status: s, Count: counts[s]})
	}
	v.Live = counts[models.EventQueued]+counts[models.EventSending] > 0
	// The whole page also answers htmx: the filter bar and the live
	// refresh each select their part of it (#results, #sendlog).
	return render(c, http.StatusOK, views.SendLogPage(p, v))
}

// eventNames are the event names rules make, each once, sorted.
func eventNames(rules []models.SendRule) []string {
	var names []string
	for _, r := range rules {
		names = append(names, r.EventName)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func (h *Handler) eventRows(a models.Account, evs []models.Event, datasets []models.Dataset) []views.EventRow {
	names := map[int64]string{}
	for _, d := range datasets {
		names[d.ID] = destinationLabel(d)
	}
	now, loc := h.now(), location(a)
	rows := make([]views.EventRow, 0, len(evs))
	for _, e := range evs {
		rows = append(rows, views.EventRow{Event: e, Dataset: names[e.DatasetID], When: h.formatTime(a, &e.EventTime),
			EventAt: views.NewStamp(e.EventTime, now, loc), Queued: views.NewStamp(e.CreatedAt, now, loc),
			Lead: "Lead " + strconv.FormatInt(e.LeadID, 10)})
	}
	return rows
}

// nameLeads names each row's lead as every page does (views.LeadName).
func (h *Handler) nameLeads(c echo.Context, accountID int64, rows []views.EventRow) error {
	ids := make([]int64, 0, len(rows))
	for _, r := range rows {
		ids = append(ids, r.Event.LeadID)
	}
	leads, err := h.store.LeadNames(c.Request().Context(), accountID, ids)
	if err != nil {
		return err
	}
	for i, r := range rows {
		if l, ok := leads[r.Event.LeadID]; ok {
			rows[i].Lead = views.LeadName(l)
		}
	}
	return nil
}

func (h *Handler) eventParam(c echo.Context) (models.Event, error) {
	id, err := strconv.ParseInt(c.Param("event"), 10, 64)
	if err != nil {
		return models.Event{}, store.ErrNotFound
	}
	return h.store.Event(c.Request().Context(), currentAccount(c).ID, id)
}

func (h *Handler) showEvent(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	e, err := h.eventParam(c)
	if err != nil {
		return err
	}
	datasets, err := h.store.Datasets(ctx, a.ID)
	if err != nil {
		return err
	}
	rows := h.eventRows(a.Account, []models.Event{e}, datasets)
	if err := h.nameLeads(c, a.ID, rows); err != nil {
		return err
	}
	now, loc := h.now(), location(a.Account)
	v := views.EventView{Row: rows[0]}
	if e.SentAt != nil {
		v.Sent = views.NewStamp(*e.SentAt, now, loc)
	}
	if v.MadeBy, v.MadeByURL, err = h.madeBy(c, a.ID, e); err != nil {
		return err
	}
	if !a.Role.AtLeast(models.RoleEditor) {
		v.MadeByURL = "" // a rule's and a mapping's forms are editors'
	}
	if e.State() == models.EventHeldBack {
		fix := heldBackFix(e, eventFixPlaces(a, e, v.MadeByURL, v.MadeBy, rows[0].Dataset))
		v.Fix = &fix
	}
	if v.CanRetry, v.RetryNote, err = h.eventRetry(c, a, e); err != nil {
		return err
	}
	if e.Status == models.EventQueued {
		v.NextTry = views.NewStamp(e.NextAttemptAt, now, loc)
		if e.Payload != "" {
			v.PayloadNote = "As last built: it is built again from the lead and the dataset when it is sent."
			if i := slices.IndexFunc(datasets, func(d models.Dataset) bool { return d.ID == e.DatasetID }); i >= 0 &&
				capi.Prepared(e, platform.Stamp(a.Account, datasets[i])) {
				v.PayloadNote = "Prepared when the event was queued, and sent as it is, unless the lead or the dataset's payload settings change first: then it is built again."
			}
		}
	}
	payload := []byte(e.Payload)
	if e.RequestID != nil {
		if r, err := h.store.SendRequest(ctx, a.ID, *e.RequestID); err == nil {
			v.Request, v.Reply = &r, readableJSON([]byte(r.Response))
			if len(payload) == 0 {
				// Sent before migration 0010: its JSON is in its request.
				payload = capi.BatchEvent([]byte(r.Payload), e.EventID)
			}
		}
	}
	if len(payload) > 0 {
		v.Payload = readableJSON(payload)
	}
	p := h.page(c, e.EventName+" event")
	p.Nav = "events"
	return render(c, http.StatusOK, views.EventPage(p, v))
}

// eventRetry says whether the event page offers Retry for event e: only
// to an editor, for an event that failed or was held back, and only when a
// retry now may send it (dispatch.Retryable); else note says why not, for
// an event a retry cannot change yet.
func (h *Handler) eventRetry(c echo.Context, a *models.AccountAccess, e models.Event) (ok bool, note string, err error) {
	st := e.State()
	if (st != models.EventFailed && st != models.EventHeldBack) || !a.Role.AtLeast(models.RoleEditor) {
		return false, "", nil
	}
	kind, detail, err := dispatch.Retryable(c.Request().Context(), h.store, h.decider.Matchers, a.ID, e, h.now())
	switch {
	case err != nil:
		return false, "", err
	case kind == "":
		return true, "", nil
	case kind == dispatch.LeftTooOld:
		return false, "No retry: the event is older than Meta's 7 days now, so Meta would not take it.", nil
	case st == models.EventHeldBack:
		return false, "Retry appears here once the change is made: as things are, the event would be held back again.", nil
	case kind == dispatch.LeftRefused:
		return false, "No retry: Meta refused this very event, and it would be built the same. Retry appears here once the lead or the settings change what is sent.", nil
	}
	return false, "No retry: as things are, it would not be sent (" + name.Cut(detail, 140) + ").", nil
}

// madeBy names what made event e (madeByName), with a link to its rule
// or stage mapping while it exists.
func (h *Handler) madeBy(c echo.Context, accountID int64, e models.Event) (name, url string, err error) {
	if !madeByRule(e) {
		return madeByName(e, nil), "", nil
	}
	r, err := h.store.SendRule(c.Request().Context(), accountID, *e.OriginID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return madeByName(e, nil), "", nil
	case err != nil:
		return "", "", err
	case e.Origin == models.OriginStage:
		return madeByName(e, &r), views.AccountURL(accountID, "/stages/mappings/"+strconv.FormatInt(r.ID, 10)), nil
	}
	return madeByName(e, &r), views.AccountURL(accountID, "/rules/"+strconv.FormatInt(r.ID, 10)), nil
}

// madeByRule says whether a send rule or a stage mapping made event e
// (both send rules, OriginID their id).
func madeByRule(e models.Event) bool {
	return e.OriginID != nil && (e.Origin == models.OriginRule || e.Origin == models.OriginStage)
}

// madeByName says what made event e: r is its rule or stage mapping (nil
// once deleted), else a test event or the default before send rules.
func madeByName(e models.Event, r *models.SendRule) string {
	switch {
	case e.Origin == models.OriginTest:
		return "a test event from the dataset's page"
	case e.Origin == models.OriginDefault:
		return "the default of the time before send rules"
	case !madeByRule(e):
		return ""
	}
	kind := "rule"
	if e.Origin == models.OriginStage {
		kind = "stage mapping"
	}
	if r == nil {
		return "a " + kind + " since deleted"
	}
	return kind + " " + r.Name
}

// readableJSON is an event's JSON as Meta reads it, indented: Go's encoder
// writes &, < and > as \u0026, \u003c and \u003e (safe in HTML), which are
// the same characters to Meta and only hard to read here; the page escapes
// its text for HTML itself.
func readableJSON(b []byte) string {
	var buf bytes.Buffer
	if json.Indent(&buf, b, "", "  ") != nil {
		return string(b)
	}
	return unescapeHTML(buf.String())
}

// unescapeHTML turns the \u0026, \u003c, \u003e, \u2028 and \u2029
// escapes of JSON text back into their characters. It reads each escape
// whole, so an escaped backslash followed by "u0026" stays as it is.
func unescapeHTML(s string) string {
	if !strings.Contains(s, `\u`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		if s[i+1] == 'u' && i+6 <= len(s) {
			switch s[i+2 : i+6] {
			case "0026", "003c", "003e", "2028", "2029":
				r, _ := strconv.ParseUint(s[i+2:i+6], 16, 32)
				b.WriteRune(rune(r))
				i += 5
				continue
			}
		}
		b.WriteString(s[i : i+2])
		i++
	}
	return b.String()
}

func (h *Handler) retryEvent(c echo.Context) error {
	a := currentAccount(c)
	e, err := h.eventParam(c)
	if err != nil {
		return err
	}
	if e.Status != models.EventFailed {
		setFlash(c, "error", "Only failed and held-back events can be retried.")
		return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/events/"+strconv.FormatInt(e.ID, 10)))
	}
	r, err := dispatch.Retry(c.Request().Context(), h.store, h.decider.Matchers, a.ID, []int64{e.ID}, h.now())
	if err != nil {
		return err
	}
	switch {
	case r.Queued == 1:
		h.notify()
		setFlash(c, "ok", "Queued again: it goes out within seconds.")
	case len(r.Left) == 1:
		setFlash(c, "error", "Not queued again: "+leftReason(r.Left[0], true)+".")
	default:
		setFlash(c, "error", "Only failed events can be retried.")
	}
	return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/events/"+strconv.FormatInt(e.ID, 10)))
}

func (h *Handler) retryAllEvents(c echo.Context) error {
	a := currentAccount(c)
	r, err := dispatch.Retry(c.Request().Context(), h.store, h.decider.Matchers, a.ID, nil, h.now())
	if err != nil {
		return err
	}
	if r.Queued > 0 {
		h.notify()
	}
	kind := "ok"
	if r.Queued == 0 {
		kind = "error"
	}
	setFlash(c, kind, retriedMessage(r))
	return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/events"))
}

// retriedMessage says what a retry of the failed events did: "12 queued
// again; 3 left: their platform rejects them as sent (…)".
func retriedMessage(r dispatch.Retried) string {
	left := r.LeftCount()
	switch {
	case r.Queued == 0 && left == 0:
		return "No failed event to retry."
	case left == 0:
		return views.Plural(r.Queued, "failed event", "failed events") + " queued again: they go out within seconds."
	}
	var b strings.Builder
	if r.Queued == 0 {
		b.WriteString("None queued again")
	} else {
		fmt.Fprintf(&b, "%d queued again", r.Queued)
	}
	fmt.Fprintf(&b, "; %d left: ", left)
	for i, l := range r.Left {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(leftReason(l, len(r.Left) == 1))
	}
	b.WriteString(".")
	return b.String()
}

// maxDetails is how many of a group's reasons a retry's message names.
const maxDetails = 2

// leftReason says why a retry left a group of events, with its first
// reasons. all says the group is every event left, which the message
// counted already.
func leftReason(l dispatch.Left, all bool) string {
	var details []string
	for i, d := range l.Details {
		if i == maxDetails {
			details = append(details, "…")
			break
		}
		details = append(details, name.Cut(d, 140))
	}
	detail := ""
	if len(details) > 0 {
		detail = " (" + strings.Join(details, "; ") + ")"
	}
	if !all {
		n := strconv.FormatInt(l.Count, 10)
		switch l.Kind {
		case dispatch.LeftRefused:
			return n + " that their platform rejects as sent" + detail
		case dispatch.LeftTooOld:
			return n + " older than 7 days, which no platform takes"
		}
		return n + " held back" + detail
	}
	them, they := "them", "they are"
	if l.Count == 1 {
		them, they = "it", "it is"
	}
	switch l.Kind {
	case dispatch.LeftRefused:
		return "their platform rejects " + them + " as sent" + detail
	case dispatch.LeftTooOld:
		return they + " older than 7 days, which no platform takes"
	}
	return they + " held back" + detail
}
