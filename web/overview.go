package web

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/junk"
	"github.com/leadsignal/leadsignal/internal/overview"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// overviewWeeks is how many weeks the Overview's chart and sequences show.
const overviewWeeks = 12

// overviewDays is the Overview's default range: the last 28 days.
const overviewDays = 28

// overviewFilter is the Overview's filters as read: the range is whole
// days of the account's zone, [from, to).
type overviewFilter struct {
	from, to time.Time
	counts   store.CountFilter
	goal     string
	// cohort shows the funnel of the leads captured in the range (at a
	// stage or a later one now) rather than the stages reached in it.
	cohort bool
}

func parseOverviewFilter(c echo.Context, loc *time.Location, now time.Time) (overviewFilter, views.OverviewFilter) {
	q := c.QueryParams()
	vf := views.OverviewFilter{From: q.Get("from"), To: q.Get("to"), Source: q.Get("source"), Campaign: q.Get("campaign")}
	var f overviewFilter
	f.from, f.to, vf.Error = dayRange(vf.From, vf.To, loc)
	tomorrow := store.AddDays(now, 1, loc)
	if f.to.IsZero() {
		f.to = tomorrow
	}
	if f.from.IsZero() {
		f.from = store.AddDays(f.to, -overviewDays, loc)
	}
	if !f.from.Before(f.to) {
		vf.Error = "The From date must be on or before the To date."
		f.from, f.to = store.AddDays(tomorrow, -overviewDays, loc), tomorrow
	}
	if vf.From == "" && vf.To == "" && vf.Error == "" {
		vf.RangeLabel = "last 28 days"
	} else {
		vf.RangeLabel = f.from.In(loc).Format("Jan 2, 2006") + " – " + f.to.Add(-time.Nanosecond).In(loc).Format("Jan 2, 2006")
	}
	if models.Source(vf.Source).Valid() {
		f.counts.Source = models.Source(vf.Source)
	} else {
		vf.Source = ""
	}
	f.counts.Campaign = vf.Campaign
	f.goal = q.Get("goal")
	f.cohort = q.Get("funnel") == "cohort"
	vf.Cohort = f.cohort
	return f, vf
}

// overviewLinks makes the links of the Overview's numbers: the leads list
// or the send log, filtered to the rows a number counts.
type overviewLinks struct {
	base string // the account's URL
	f    overviewFilter
	loc  *time.Location
	// sendLog: the reader may open the send log; its numbers link there.
	sendLog bool
}

// leads links to the leads captured in [from, to) with the filters, and
// the extra parameters kv.
func (l overviewLinks) leads(from, to time.Time, kv ...string) string {
	q := l.query("from", "to", from, to)
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return l.base + "/leads?" + q.Encode()
}

// reached links to the leads that first reached stage in [from, to),
// with the filters: what a stage row counts.
func (l overviewLinks) reached(from, to time.Time, stage string) string {
	q := l.query("reached_from", "reached_to", from, to)
	q.Set("reached", stage)
	return l.base + "/leads?" + q.Encode()
}

// events links to the send log's events of the leads captured in
// [from, to), with the filters, and the extra parameters kv.
func (l overviewLinks) events(from, to time.Time, kv ...string) string {
	if !l.sendLog {
		return ""
	}
	q := l.query("lead_from", "lead_to", from, to)
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return l.base + "/events?" + q.Encode()
}

func (l overviewLinks) query(fromKey, toKey string, from, to time.Time) url.Values {
	q := url.Values{}
	q.Set(fromKey, from.In(l.loc).Format("2006-01-02"))
	q.Set(toKey, store.LastDay(to, l.loc))
	if l.f.counts.Source != "" {
		q.Set("source", string(l.f.counts.Source))
	}
	if l.f.counts.Campaign != "" {
		q.Set("campaign", l.f.counts.Campaign)
	}
	return q
}

// overviewData is what the Overview reads, for the page and its CSVs.
type overviewData struct {
	filter  overviewFilter
	vf      views.OverviewFilter
	loc     *time.Location
	stages  []overview.Stage
	mapped  []overview.Stage
	weeks   []store.Span
	byWeek  store.Counts
	inRange store.Counts
	// unfiltered is byWeek without the filters, for the readiness checks;
	// byWeek itself when no filter is set.
	unfiltered store.Counts
	links      overviewLinks
	// destinations are the account's, by name: the reconciliation follows
	// a stage to each.
	destinations []models.Dataset
	// created is when the account was made: the chart starts there.
	created time.Time
	// sequences are the account's sequences with their complete
	// sequences in each of the chart's weeks, read when asked for.
	sequences []store.SequenceCount
}

// periods are the headline's columns: this week, last week and the range.
func (d overviewData) periods() (names []string, spans []store.Span, counts []store.Counts, idx []int) {
	n := len(d.weeks)
	names = []string{"This week", "Last week", d.vf.RangeLabel}
	names[2] = strings.ToUpper(names[2][:1]) + names[2][1:]
	spans = []store.Span{d.weeks[n-1], d.weeks[n-2], {From: d.filter.from, To: d.filter.to, Loc: d.loc}}
	counts = []store.Counts{d.byWeek, d.byWeek, d.inRange}
	idx = []int{n - 1, n - 2, 0}
	return names, spans, counts, idx
}

// readOverview reads what the Overview shows, the sequences' weeks too
// when withSequences (their count is the costliest read, and most of the
// Overview's tables need none), its reads side by side (together, as the
// agency overview's): none depends on another.
func (h *Handler) readOverview(c echo.Context, withSequences bool) (overviewData, error) {
	a := currentAccount(c)
	d := overviewData{loc: location(a.Account), created: a.Account.CreatedAt}
	now := h.now()
	d.filter, d.vf = parseOverviewFilter(c, d.loc, now)
	d.links = overviewLinks{base: views.AccountURL(a.ID, ""), f: d.filter, loc: d.loc, sendLog: a.Role.AtLeast(models.RoleSales)}
	starts := store.WeekStarts(d.loc, now, overviewWeeks)
	for i, s := range starts {
		end := store.AddDays(s, 7, d.loc)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		d.weeks = append(d.weeks, store.Span{AccountID: a.ID, From: s, To: end, Loc: d.loc})
	}
	// The weeks need no stage change times: only the range's funnel does.
	weekly := d.filter.counts
	weekly.NoDelays = true
	unfiltered := weekly == (store.CountFilter{NoDelays: true})
	rng := []store.Span{{AccountID: a.ID, From: d.filter.from, To: d.filter.to, Loc: d.loc}}
	reads := []func(context.Context) error{
		func(ctx context.Context) (err error) { d.stages, err = h.accountStages(ctx, a.ID); return },
		func(ctx context.Context) (err error) { d.byWeek, err = h.store.Counts(ctx, d.weeks, weekly); return },
		func(ctx context.Context) (err error) {
			d.inRange, err = h.store.Counts(ctx, rng, d.filter.counts)
			return
		},
		func(ctx context.Context) (err error) { d.destinations, err = h.store.Datasets(ctx, a.ID); return },
		func(ctx context.Context) (err error) {
			d.vf.Campaigns, err = h.store.Campaigns(ctx, a.ID, starts[0], 50)
			return
		},
	}
	if !unfiltered {
		reads = append(reads, func(ctx context.Context) (err error) {
			d.unfiltered, err = h.store.Counts(ctx, d.weeks, store.CountFilter{NoDelays: true})
			return
		})
	}
	if withSequences {
		reads = append(reads, func(ctx context.Context) (err error) {
			d.sequences, err = h.store.SequenceWeeks(ctx, a.ID, d.loc, now, overviewWeeks)
			return
		})
	}
	err := together(c.Request().Context(), reads...)
	d.mapped = overview.Mapped(d.stages)
	if unfiltered {
		d.unfiltered = d.byWeek
	}
	return d, err
}

// showOverview shows an account's headline counts, chart, funnel and
// checks and, to members who can act on them, the getting-started steps
// it has not all taken yet.
func (h *Handler) showOverview(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	var v views.Overview
	var err error
	if a.Role.AtLeast(models.RoleEditor) {
		if v.Start, err = h.gettingStarted(c, a.ID); err != nil {
			return err
		}
		v.HasLeads = v.Start.HasLeads
	} else {
		if v.HasLeads, err = h.store.HasLeads(ctx, a.ID); err != nil {
			return err
		}
	}
	p := h.page(c, a.Name)
	p.Nav = "overview"
	if !v.HasLeads {
		return render(c, 200, views.OverviewPage(p, v))
	}
	table := c.QueryParam("csv")
	d, err := h.readOverview(c, table == "" || table == "sequences")
	if err != nil {
		return err
	}
	if table != "" {
		return h.overviewCSV(c, d, table)
	}
	v.Filter = d.vf
	v.Columns, v.Headline, v.Reached = headline(d)
	v.FunnelViews = funnelViews(c, d)
	v.Chart = weeklyChart(d)
	v.Funnel = funnel(d)
	v.Junk, v.JunkTotal = junkReasons(d)
	v.Coverage = coverage(d)
	v.Reconcile, v.ReconcileTitle = reconcile(d), reconcileTitle(d.destinations)
	if v.Readiness, err = h.readiness(c, d); err != nil {
		return err
	}
	if len(d.sequences) > 0 {
		v.Sequences = sequenceHealthView(d.sequences, d.destinations)
	}
	q := c.QueryParams()
	q.Del("csv")
	v.CSV = views.AccountURL(a.ID, "") + "?" + q.Encode()
	return render(c, 200, views.OverviewPage(p, v))
}

// headline is the headline tables: per period, the leads captured, junk,
// partial and their events by status; and the leads that reached each
// mapped stage in the period, by when they reached it.
func headline(d overviewData) (cols []string, captured, reached []views.HeadlineRow) {
	names, spans, counts, idx := d.periods()
	figs := make([]overview.Figures, len(spans))
	for i := range spans {
		figs[i] = overview.Sum(counts[i], idx[i], d.stages)
	}
	row := func(key, label, hint string, sub bool, n func(overview.Figures) int64, href func(store.Span) string) views.HeadlineRow {
		r := views.HeadlineRow{Key: key, Label: label, Hint: hint, Sub: sub}
		for i, sp := range spans {
			r.Counts = append(r.Counts, views.Count{N: n(figs[i]), Href: href(sp)})
		}
		return r
	}
	leads := func(kv ...string) func(store.Span) string {
		return func(sp store.Span) string { return d.links.leads(sp.From, sp.To, kv...) }
	}
	events := func(status models.EventStatus) func(store.Span) string {
		return func(sp store.Span) string { return d.links.events(sp.From, sp.To, "status", string(status)) }
	}
	rows := []views.HeadlineRow{
		row("leads", "Leads", "Every lead captured in the period, junk and partial ones included", false, func(f overview.Figures) int64 { return f.Leads }, leads()),
		row("junk", "of them junk", "Flagged by a junk signal or marked junk by a person", true, func(f overview.Figures) int64 { return f.Junk }, leads("junk", "junk")),
		row("partial", "of them partial", "Forms left before they were submitted", true, func(f overview.Figures) int64 { return f.Partial }, leads("partial", "yes")),
	}
	byTime := make([][]int64, len(spans))
	for i := range spans {
		byTime[i] = overview.ReachedIn(counts[i], idx[i], d.stages)
	}
	// The mapped stages, and the chart's "qualified" even when it is not
	// mapped: the chart's legend never names a figure the table lacks.
	q := overview.Qualified(d.stages)
	for i, st := range d.stages {
		if !st.Mapped() && i != q {
			continue
		}
		r := views.HeadlineRow{Key: "reached-" + strings.ToLower(st.Name), Label: st.Name,
			Hint: "Leads that first reached " + st.Name + " in the period, whenever they were captured"}
		for p, sp := range spans {
			r.Counts = append(r.Counts, views.Count{N: byTime[p][i], Href: d.links.reached(sp.From, sp.To, st.Name)})
		}
		reached = append(reached, r)
	}
	status := func(label, hint string, s models.EventStatus) views.HeadlineRow {
		return row(string(s), label, hint, false, func(f overview.Figures) int64 { return f.Events[s] }, events(s))
	}
	rows = append(rows,
		status("Events sent", "Events of these leads that their platforms received", models.EventSent),
		status("Events waiting", "Queued or being sent", models.EventQueued),
		status("Events failed", "Their platforms refused them, or their attempts ran out", models.EventFailed),
		status("Events held back", "Our check refused them before sending: the lead, rule or dataset needs a change, the send log says what", models.EventHeldBack),
		status("Events not sent", "Cancelled: the lead no longer matches its rule, or was marked junk", models.EventNotSent),
		status("Events expired", "Older than 7 days when their turn came: never sent", models.EventExpired))
	var dry bool
	for _, f := range figs {
		dry = dry || f.Events[models.EventDryRun] > 0
	}
	if dry {
		rows = append(rows, status("Events built in dry run", "Built and logged, not sent: the dataset is in dry run", models.EventDryRun))
	}
	return names, rows, reached
}

func weeklyChart(d overviewData) views.WeeklyCounts {
	c := views.WeeklyCounts{ID: "weekly"}
	leads := views.ChartSeries{Name: "Leads", One: "lead", Class: "leads"}
	junkS := views.ChartSeries{Name: "Junk", One: "junk lead", Class: "junk"}
	q := overview.Qualified(d.stages)
	var qual views.ChartSeries
	if q >= 0 {
		qual = views.ChartSeries{Name: "Reached " + d.stages[q].Name, One: "lead", Class: "qualified"}
	}
	for i, w := range d.weeks {
		c.Weeks = append(c.Weeks, w.From)
		f := overview.Sum(d.byWeek, i, d.stages)
		leads.Values = append(leads.Values, f.Leads)
		leads.Links = append(leads.Links, d.links.leads(w.From, w.To))
		junkS.Values = append(junkS.Values, f.Junk)
		junkS.Links = append(junkS.Links, d.links.leads(w.From, w.To, "junk", "junk"))
		if q >= 0 {
			qual.Values = append(qual.Values, overview.ReachedIn(d.byWeek, i, d.stages)[q])
			qual.Links = append(qual.Links, d.links.reached(w.From, w.To, d.stages[q].Name))
		}
	}
	c.Series = []views.ChartSeries{leads, junkS}
	if q >= 0 {
		c.Series = append(c.Series, qual)
	}
	c.StartAt(d.created)
	c.Title = "Leads per week by capture, stages by when they were reached, " + views.LastWeeks(len(c.Weeks))
	return c
}

// funnel is the range's funnel: by default the leads captured in it and
// the leads that reached each stage in it, by when they reached it (with
// the median time from lead to stage); as a cohort, the leads captured in
// it and those of them at each stage or a later one now.
func funnel(d overviewData) views.FunnelChart {
	f := views.FunnelChart{ID: "funnel", Title: "Funnel, " + d.vf.RangeLabel + ": stages by when leads reached them"}
	if d.filter.cohort {
		f.Title = "Funnel of the leads captured " + d.vf.Captured()
	}
	figs := overview.Sum(d.inRange, 0, d.stages)
	byTime := overview.ReachedIn(d.inRange, 0, d.stages)
	f.Steps = append(f.Steps, views.FunnelStep{Name: "Leads", Count: figs.Leads, Href: d.links.leads(d.filter.from, d.filter.to)})
	for i, st := range d.stages {
		if !st.Mapped() {
			continue
		}
		if d.filter.cohort {
			f.Steps = append(f.Steps, views.FunnelStep{Name: st.Name, Count: figs.Reached[i],
				Href: d.links.leads(d.filter.from, d.filter.to, "reached", st.Name)})
			continue
		}
		med, ok := overview.Median(d.inRange, 0, st)
		f.Steps = append(f.Steps, views.FunnelStep{Name: st.Name, Count: byTime[i],
			Href: d.links.reached(d.filter.from, d.filter.to, st.Name), Median: med, HasMedian: ok})
	}
	if len(d.mapped) == 0 {
		f.Empty = "Map your CRM's stages to events on the Stages page to see the funnel."
	}
	return f
}

// funnelViews are the funnel's two ways of counting, each a link to the
// Overview as it is with that one chosen.
func funnelViews(c echo.Context, d overviewData) []views.Choice {
	q := c.QueryParams()
	q.Del("csv")
	link := func(cohort bool) string {
		q.Del("funnel")
		if cohort {
			q.Set("funnel", "cohort")
		}
		return views.AccountURL(currentAccount(c).ID, "") + "?" + q.Encode() + "#funnel-section"
	}
	return []views.Choice{
		{Label: "stages by when they were reached", Href: link(false), Current: !d.filter.cohort},
		{Label: "the leads captured in the range", Href: link(true), Current: d.filter.cohort},
	}
}

func junkReasons(d overviewData) ([]views.JunkReasonRow, views.Count) {
	var rows []views.JunkReasonRow
	for _, r := range overview.JunkReasons(d.inRange, 0) {
		label := "Marked junk by a person"
		if r.Reason != "" {
			label, _ = junk.Describe(junk.Signal(r.Reason))
			if label == "" {
				label = r.Reason
			}
		}
		rows = append(rows, views.JunkReasonRow{Label: label, N: r.N})
	}
	figs := overview.Sum(d.inRange, 0, nil)
	return rows, views.Count{N: figs.Junk, Href: d.links.leads(d.filter.from, d.filter.to, "junk", "junk")}
}

func coverage(d overviewData) views.CoverageTable {
	var t views.CoverageTable
	for _, k := range overview.Keys {
		t.Keys = append(t.Keys, k.Name)
	}
	all := overview.Coverage{Carry: make([]int64, len(overview.Keys))}
	for _, cv := range overview.Coverages(d.inRange, 0) {
		r := views.CoverageRow{EventName: cv.EventName, Events: cv.Events, Weak: cv.Weakest()}
		for i := range overview.Keys {
			r.Shares = append(r.Shares, share(min(cv.Carry[i], cv.Base(i)), cv.Base(i)))
			all.Carry[i] += cv.Carry[i]
		}
		all.Events += cv.Events
		all.Website += cv.Website
		all.InstantForm += cv.InstantForm
		t.Rows = append(t.Rows, r)
	}
	if w := all.Weakest(); w >= 0 {
		k := overview.Keys[w]
		t.Hint = k.Name + " is on " + share(all.Carry[w], all.Base(w)) + " of the events that could carry it: " + k.Hint + "."
	}
	return t
}

func share(n, of int64) string {
	if of == 0 {
		return "–"
	}
	return strings.TrimSuffix(formatFloat(100*float64(n)/float64(of)), ".0") + "%"
}

// reconcile follows each mapped stage to its events, one line per stage,
// event and destination the events went to (all of them on one line when
// the account has one destination), each count linked to those events in
// the send log.
func reconcile(d overviewData) []views.ReconcileLine {
	var out []views.ReconcileLine
	figs := overview.Sum(d.inRange, 0, d.stages)
	from, to := d.filter.from, d.filter.to
	for i, st := range d.stages {
		for _, ev := range st.Events {
			targets := []models.Dataset{{}}
			if len(d.destinations) > 1 {
				targets = eventDestinations(d, ev)
			}
			for _, ds := range targets {
				by := overview.EventsTo(d.inRange, 0, ev, ds.ID)
				var made int64
				for _, n := range by {
					made += n
				}
				filter := []string{"event", ev}
				if ds.ID != 0 {
					filter = append(filter, "dataset", strconv.FormatInt(ds.ID, 10))
				}
				link := func(s models.EventStatus) views.Count {
					return views.Count{N: by[s], Href: d.links.events(from, to, append(filter, "status", string(s))...)}
				}
				line := views.ReconcileLine{
					Stage: st.Name, Event: ev,
					Reached: views.Count{N: figs.Reached[i], Href: d.links.leads(from, to, "reached", st.Name)},
					Made:    views.Count{N: made, Href: d.links.events(from, to, filter...)},
					Sent:    link(models.EventSent), Waiting: link(models.EventQueued), Failed: link(models.EventFailed),
					HeldBack: link(models.EventHeldBack), NotSent: link(models.EventNotSent),
					Expired: link(models.EventExpired), DryRun: link(models.EventDryRun),
				}
				if ds.ID != 0 {
					line.Destination = destinationLabel(ds)
				}
				out = append(out, line)
			}
		}
	}
	return out
}

// eventDestinations are the account's destinations that have events named
// ev in the range, in the account's order; one with none when none has.
func eventDestinations(d overviewData, ev string) []models.Dataset {
	has := map[int64]bool{}
	for _, e := range d.inRange.Events {
		if e.Span == 0 && e.EventName == ev && e.N != 0 {
			has[e.DatasetID] = true
		}
	}
	var out []models.Dataset
	for _, ds := range d.destinations {
		if has[ds.ID] {
			out = append(out, ds)
		}
	}
	if len(out) == 0 {
		return []models.Dataset{{}}
	}
	return out
}

// reconcileTitle names where the reconciliation follows stages to: Meta,
// or the one platform the account sends to, or its destinations.
func reconcileTitle(ds []models.Dataset) string {
	kinds := map[models.Kind]bool{}
	for _, d := range ds {
		kinds[d.Of()] = true
	}
	if len(kinds) > 1 {
		return "From the CRM to each destination"
	}
	for k := range kinds {
		return "From the CRM to " + platform.Name(k)
	}
	return "From the CRM to Meta"
}
