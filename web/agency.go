package web

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/overview"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// staleStages is how long an account that records stage changes may go
// without one before the agency overview says so.
const staleStages = 24 * time.Hour

// failingWindow is how far back the agency overview looks for failed
// events, by their own time (a stage event of an old lead too).
const failingWindow = 7 * 24 * time.Hour

// showAccounts is the agency overview: each of the user's accounts with
// this week's leads, qualified leads and events sent and failed, and what
// needs attention, those that need it most first.
func (h *Handler) showAccounts(c echo.Context) error {
	p := h.page(c, "Accounts")
	rows, err := h.agencyRows(c, p.Accounts)
	if err != nil {
		return err
	}
	if c.QueryParam("csv") != "" {
		return agencyCSV(c, rows)
	}
	return render(c, 200, views.AccountsPage(p, rows))
}

func (h *Handler) agencyRows(c echo.Context, accounts []models.AccountAccess) ([]views.AccountRow, error) {
	if len(accounts) == 0 {
		return nil, nil
	}
	ctx := c.Request().Context()
	now := h.now()
	ids := make([]int64, len(accounts))
	spans := make([]store.Span, len(accounts))
	for i, a := range accounts {
		ids[i] = a.ID
		loc := location(a.Account)
		starts := store.WeekStarts(loc, now, 2)
		spans[i] = store.Span{AccountID: a.ID, From: starts[1], To: store.AddDays(starts[1], 7, loc), Loc: loc}
	}
	counts, err := h.store.Counts(ctx, spans, store.CountFilter{NoDelays: true})
	if err != nil {
		return nil, err
	}
	datasets, err := h.store.DatasetsOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	stages, err := h.store.StagesOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	lastStage, err := h.store.LastStageUpdates(ctx, ids)
	if err != nil {
		return nil, err
	}
	withSeq, err := h.store.WithSequences(ctx, ids)
	if err != nil {
		return nil, err
	}
	failing, err := h.store.FailedSince(ctx, ids, now.Add(-failingWindow))
	if err != nil {
		return nil, err
	}
	stuck, err := h.store.StuckCRMConnections(ctx, ids)
	if err != nil {
		return nil, err
	}
	rows := make([]views.AccountRow, len(accounts))
	for i, a := range accounts {
		r := views.AccountRow{Access: a}
		st := overview.Stages(stages[a.ID], nil)
		q := overview.Qualified(st)
		f := overview.Sum(counts, i, st)
		r.Leads, r.Sent, r.Failed = f.Leads, f.Events[models.EventSent], f.Events[models.EventFailed]
		if q >= 0 {
			r.Qualified, r.QualifiedStage = f.Reached[q], st[q].Name
		}
		for _, d := range datasets[a.ID] {
			switch {
			case d.PausedAt != nil:
				r.Alerts = append(r.Alerts, views.AccountAlert{Text: d.Name + " paused: " + d.PausedReason, Severity: 4})
			case d.HeldSince != nil:
				r.Alerts = append(r.Alerts, views.AccountAlert{Text: d.Name + " held: Meta failing since " + h.formatTime(a.Account, d.HeldSince), Severity: 3})
			}
		}
		for _, sc := range stuck {
			if sc.AccountID == a.ID {
				r.Alerts = append(r.Alerts, views.AccountAlert{Severity: 3, Text: stuckText(sc)})
			}
		}
		if n := failing[a.ID]; n > 0 {
			r.Alerts = append(r.Alerts, views.AccountAlert{Text: views.Plural(n, "event", "events") + " failed in the last 7 days", Severity: 2})
		}
		if slices.Contains(withSeq, a.ID) {
			seqs, err := h.store.SequenceWeeks(ctx, a.ID, location(a.Account), now, 2)
			if err != nil {
				return nil, err
			}
			for _, sc := range seqs {
				if l := sc.Learning(); l.Limited {
					r.Alerts = append(r.Alerts, views.AccountAlert{Severity: 1,
						Text: "learning limited: " + sc.Sequence.FinalEvent + " " + views.Plural(l.LastWeek.Complete, "sequence", "sequences") + " last week"})
					break
				}
			}
		}
		if last, ok := lastStage[a.ID]; ok && now.Sub(last) > staleStages {
			r.Alerts = append(r.Alerts, views.AccountAlert{Severity: 1, Text: "no stage update since " + h.formatTime(a.Account, &last)})
		}
		rows[i] = r
	}
	// Those that need attention most first, then by name (as listed).
	slices.SortStableFunc(rows, func(x, y views.AccountRow) int { return y.Attention() - x.Attention() })
	return rows, nil
}

// agencyCSV writes the agency overview's table as CSV.
func agencyCSV(c echo.Context, rows []views.AccountRow) error {
	w := startCSV(c, "accounts.csv")
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	if err := w.Write([]string{"account", "slug", "leads", "qualified", "sent", "failed", "alerts", "role"}); err != nil {
		return err
	}
	for _, r := range rows {
		alerts := make([]string, len(r.Alerts))
		for i, a := range r.Alerts {
			alerts[i] = a.Text
		}
		if err := w.Write([]string{r.Access.Name, r.Access.Slug, n(r.Leads), n(r.Qualified), n(r.Sent), n(r.Failed),
			strings.Join(alerts, "; "), string(r.Access.Role)}); err != nil {
			return err
		}
	}
	return w.Close(nil)
}
