package web

import (
	"slices"
	"strconv"
	"strings"

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
	// The last 7 full days, by when the stages were reached: a change
	// counts on its day whichever way it came in (the stage API, an
	// upload, a CRM, the lead page, the demo).
	tomorrow := store.AddDays(h.now(), 1, d.loc)
	var days []store.Span
	for i := 7; i >= 1; i-- {
		days = append(days, store.Span{AccountID: a.ID, From: store.AddDays(tomorrow, -i-1, d.loc), To: store.AddDays(tomorrow, -i, d.loc), Loc: d.loc})
	}
	reached, err := h.store.Counts(ctx, days, store.CountFilter{NoDelays: true})
	if err != nil {
		return r, err
	}
	updates := make([]bool, len(days))
	for _, st := range reached.Stages {
		updates[st.Span] = updates[st.Span] || st.N > 0
	}
	// The windows are whole weeks of the chart's counts: the 4 full weeks
	// before this one for the month, and the 4 before those for the share
	// reaching the goal (those leads are 28 days old or more). The
	// Overview's filters apply to neither.
	n := len(d.weeks)
	in := overview.ReadinessInput{Goal: r.Goal, UpdateDays: updates, MappedStages: len(d.mapped)}
	g := slices.IndexFunc(d.stages, func(s overview.Stage) bool { return strings.EqualFold(s.Name, r.Goal) })
	for w := n - 9; w < n-1; w++ {
		f := overview.Sum(d.unfiltered, w, d.stages)
		if w >= n-5 {
			in.MonthLeads += f.Leads
			continue
		}
		in.CohortLeads += f.Leads
		if g >= 0 {
			in.CohortReached += f.Reached[g]
		}
	}
	for _, e := range d.unfiltered.Events {
		if e.Span >= n-5 && e.Span < n-1 && e.Source == models.SourceInstantForm && (e.Status == models.EventSent || e.Status == models.EventDryRun) {
			in.InstantFormEvents += e.N
			in.WithLeadID += e.Keys.LeadID
		}
	}
	for _, ch := range overview.Readiness(in) {
		r.Checks = append(r.Checks, views.ReadinessCheck{Name: ch.Name, Figure: ch.Figure, Fix: ch.Fix, Pass: ch.Pass})
	}
	return r, nil
}
