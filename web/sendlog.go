package web

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/capi"
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
	for _, k := range []string{"status", "event", "dataset", "from", "to", "lead_from", "lead_to", "source", "campaign"} {
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
	p := h.page(c, "Send log")
	p.Nav = "events"
	if isHTMX(c) && after != nil {
		return render(c, http.StatusOK, views.EventRows(p, rows, next))
	}
	counts, err := h.store.EventCounts(ctx, a.ID, f, views.CountCap+1)
	if err != nil {
		return err
	}
	v := views.SendLogView{Filter: vf, Rows: rows, NextURL: next, Datasets: datasets,
		RefreshURL: views.AccountURL(a.ID, "/events?"+eventQuery(c).Encode()), Failed: counts[models.EventFailed]}
	for _, s := range models.EventStatuses {
		v.Counts = append(v.Counts, views.StatusCount{Status: string(s), Count: counts[s]})
	}
	v.Live = counts[models.EventQueued]+counts[models.EventSending] > 0
	if isHTMX(c) {
		return render(c, http.StatusOK, views.SendLogBody(p, v))
	}
	return render(c, http.StatusOK, views.SendLogPage(p, v))
}

func (h *Handler) eventRows(a models.Account, evs []models.Event, datasets []models.Dataset) []views.EventRow {
	names := map[int64]string{}
	for _, d := range datasets {
		names[d.ID] = d.Name
	}
	rows := make([]views.EventRow, 0, len(evs))
	for _, e := range evs {
		rows = append(rows, views.EventRow{Event: e, Dataset: names[e.DatasetID], When: h.formatTime(a, &e.EventTime),
			Lead: "#" + strconv.FormatInt(e.LeadID, 10)})
	}
	return rows
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
	v := views.EventView{Row: h.eventRows(a.Account, []models.Event{e}, datasets)[0],
		Sent: h.formatTime(a.Account, e.SentAt), CanRetry: e.Status == models.EventFailed && a.Role.AtLeast(models.RoleEditor)}
	if e.Status == models.EventQueued {
		v.NextTry = h.formatTime(a.Account, &e.NextAttemptAt)
		if e.Payload != "" {
			v.PayloadNote = "As last built: it is built again from the lead and the dataset when it is sent."
			if i := slices.IndexFunc(datasets, func(d models.Dataset) bool { return d.ID == e.DatasetID }); i >= 0 &&
				capi.Prepared(e, capi.Stamp(a.Account, datasets[i])) {
				v.PayloadNote = "Prepared when the event was queued, and sent as it is, unless the lead or the dataset's payload settings change first: then it is built again."
			}
		}
	}
	payload := []byte(e.Payload)
	if e.RequestID != nil {
		if r, err := h.store.SendRequest(ctx, a.ID, *e.RequestID); err == nil {
			v.Request = &r
			if len(payload) == 0 {
				// Sent before migration 0010: its JSON is in its request.
				payload = capi.BatchEvent([]byte(r.Payload), e.EventID)
			}
		}
	}
	if len(payload) > 0 {
		v.Payload = indentJSON(payload)
	}
	p := h.page(c, e.EventName+" event")
	p.Nav = "events"
	return render(c, http.StatusOK, views.EventPage(p, v))
}

func (h *Handler) retryEvent(c echo.Context) error {
	a := currentAccount(c)
	e, err := h.eventParam(c)
	if err != nil {
		return err
	}
	n, err := h.store.RetryEvents(c.Request().Context(), a.ID, []int64{e.ID}, h.now())
	if err != nil {
		return err
	}
	if n == 1 {
		h.notify()
		setFlash(c, "ok", "Queued again: it goes out within seconds.")
	} else {
		setFlash(c, "error", "Only failed events can be retried.")
	}
	return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/events/"+strconv.FormatInt(e.ID, 10)))
}

func (h *Handler) retryAllEvents(c echo.Context) error {
	a := currentAccount(c)
	n, err := h.store.RetryEvents(c.Request().Context(), a.ID, nil, h.now())
	if err != nil {
		return err
	}
	h.notify()
	setFlash(c, "ok", fmt.Sprintf("%d failed events queued again.", n))
	return c.Redirect(http.StatusSeeOther, views.AccountURL(a.ID, "/events"))
}
