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

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

// readiness checks the account against Meta's guidance for conversion
// leads optimisation toward the stage chosen (the first mapped stage by
// default), over fixed windows of all its leads: the Overview's filters
// do not apply.
func (h *Handler) readiness(c echo.Context, d overviewData) (views.Readiness, error) {
	var r views.Readiness
	for _, st := range d.mapped {
		r.Goals = append(r.Goals, st.Name)
	}
	if len(r.Goals) == 0 {
		return r, nil
	}
	r.Goal = r.Goals[0]
	for _, g := range r.Goals {
		if strings.EqualFold(g, d.filter.goal) {
			r.Goal = g
		}
	}
	ctx := c.Request().Context()
	a := currentAccount(c)
	tomorrow := store.AddDays(h.now(), 1, d.loc)
	day := func(n int) time.Time { return store.AddDays(tomorrow, n, d.loc) }
	month := []store.Span{{AccountID: a.ID, From: day(-30), To: tomorrow}}
	cohort := []store.Span{{AccountID: a.ID, From: day(-56), To: day(-28)}}
	byMonth, err := h.store.Counts(ctx, month, store.CountFilter{})
	if err != nil {
		return r, err
	}
	byCohort, err := h.store.Counts(ctx, cohort, store.CountFilter{})
	if err != nil {
		return r, err
	}
	var days []store.Span
	for i := 7; i >= 1; i-- {
		days = append(days, store.Span{AccountID: a.ID, From: day(-i - 1), To: day(-i)})
	}
	updates, err := h.store.StageUpdates(ctx, a.ID, days)
	if err != nil {
		return r, err
	}
	in := overview.ReadinessInput{
		Goal:         r.Goal,
		MonthLeads:   overview.Sum(byMonth, 0, nil).Leads,
		CohortLeads:  overview.Sum(byCohort, 0, nil).Leads,
		UpdateDays:   updates,
		MappedStages: len(d.mapped),
	}
	// Leads, not changes (a lead may record a stage twice): those of the
	// cohort at the goal or a later stage now.
	if g := slices.IndexFunc(d.stages, func(s overview.Stage) bool { return strings.EqualFold(s.Name, r.Goal) }); g >= 0 {
		in.CohortReached = overview.Sum(byCohort, 0, d.stages).Reached[g]
	}
	for _, e := range byMonth.Events {
		if e.Source == models.SourceInstantForm && (e.Status == models.EventSent || e.Status == models.EventDryRun) {
			in.InstantFormEvents += e.N
			in.WithLeadID += e.Keys.LeadID
		}
	}
	for _, ch := range overview.Readiness(in) {
		r.Checks = append(r.Checks, views.ReadinessCheck{Name: ch.Name, Figure: ch.Figure, Fix: ch.Fix, Pass: ch.Pass})
	}
	return r, nil
}
