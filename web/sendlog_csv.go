package web

import (
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/views"
)

// exportEvents answers the send log's rows under its filters as a CSV file,
// newest first, written as they are read (store.EachEvents). Times are in
// the account's zone. A lead is named as the page names it (views.LeadName:
// its name, else email or phone); the leads CSV holds its contact data. No
// payload leaves: it holds the hashed match keys.
func (h *Handler) exportEvents(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	f, _ := parseEventFilter(c, a.Account)
	datasets, err := h.store.Datasets(ctx, a.ID)
	if err != nil {
		return err
	}
	names := map[int64]string{}
	for _, d := range datasets {
		names[d.ID] = d.Name
	}
	rules, err := h.store.SendRules(ctx, a.ID)
	if err != nil {
		return err
	}
	ruleByID := map[int64]*models.SendRule{}
	for i := range rules {
		ruleByID[rules[i].ID] = &rules[i]
	}
	loc := location(a.Account)
	at := func(t *time.Time) string {
		if t == nil || t.IsZero() {
			return ""
		}
		return t.In(loc).Format(time.RFC3339)
	}
	w := startCSV(c, "send-log-"+a.Slug+"-"+h.now().In(loc).Format("2006-01-02")+".csv")
	err = w.Write([]string{"queued_at", "event_name", "event_id", "status", "dataset", "lead_id", "lead",
		"event_time", "sent_at", "attempts", "meta_answer", "fbtrace_id", "made_by"})
	if err != nil {
		return w.Close(err)
	}
	err = h.store.EachEvents(ctx, a.ID, f, func(evs []models.Event) error {
		rows := make([]views.EventRow, len(evs))
		for i, e := range evs {
			rows[i] = views.EventRow{Event: e, Lead: "Lead " + strconv.FormatInt(e.LeadID, 10)}
		}
		// A lead's name is its contact data: only owners and editors
		// download it.
		if a.Role.DownloadsContacts() {
			if err := h.nameLeads(c, a.ID, rows); err != nil {
				return err
			}
		}
		for _, r := range rows {
			e := r.Event
			var rule *models.SendRule
			if madeByRule(e) {
				rule = ruleByID[*e.OriginID]
			}
			err := w.Write([]string{at(&e.CreatedAt), e.EventName, e.EventID, views.EventStatusWord(e.Status), names[e.DatasetID],
				strconv.FormatInt(e.LeadID, 10), r.Lead, at(&e.EventTime), at(e.SentAt), strconv.Itoa(e.Attempts),
				e.LastError, e.FBTraceID, madeByName(e, rule)})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return w.Close(err)
}
