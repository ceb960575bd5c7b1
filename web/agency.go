package web

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/internal/overview"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// agencyDays is the agency overview's one window: its numbers, and the
// alerts that count (every lead junk, nothing sent, failed events), are
// those of the leads captured in the last agencyDays days of each
// account's zone, today included.
const agencyDays = 7

// trialDays is how long a dataset may stay in dry run or test before the
// agency overview says it still does: a trial, then live.
const trialDays = 14

// staleStages is how long an account that records stage changes may go
// without one before the agency overview says so.
const staleStages = 24 * time.Hour

// maxLabelsShown is how many unmapped stage labels an alert names.
const maxLabelsShown = 3

// showAccounts is the agency overview: each of the user's accounts with
// the last 7 days' leads, qualified leads and events sent and failed, and
// what needs attention, those that need it most first.
func (h *Handler) showAccounts(c echo.Context) error {
	p := h.page(c, "Accounts")
	accounts, err := h.store.AccountsForUser(c.Request().Context(), p.User.ID)
	if err != nil {
		return err
	}
	rows, err := h.agencyRows(c, accounts)
	if err != nil {
		return err
	}
	if c.QueryParam("csv") != "" {
		return agencyCSV(c, rows)
	}
	return render(c, 200, views.AccountsPage(p, rows))
}

// agencyFacts is what the agency overview reads of all the user's
// accounts, one query per fact whatever their number.
type agencyFacts struct {
	spans     []store.Span
	counts    []store.Counts // by span
	datasets  map[int64][]models.Dataset
	stages    map[int64][]models.Stage
	mappings  map[int64][]models.SendRule
	crmStages map[int64][]models.CRMStage
	labels    map[int64][]string
	lastStage map[int64]time.Time
	stuck     []store.StuckCRM
	sequences map[int64][]store.SequenceCount
}

// agencyFacts reads the facts side by side (together): none depends on
// another, and the page waits for the slowest rather than for their sum.
func (h *Handler) agencyFacts(c echo.Context, accounts []models.AccountAccess) (agencyFacts, error) {
	now := h.now()
	var f agencyFacts
	ids := make([]int64, len(accounts))
	zones := make([]store.AccountZone, len(accounts))
	f.spans = make([]store.Span, len(accounts))
	for i, a := range accounts {
		ids[i] = a.ID
		loc := location(a.Account)
		zones[i] = store.AccountZone{AccountID: a.ID, Loc: loc}
		tomorrow := store.AddDays(now, 1, loc)
		f.spans[i] = store.Span{AccountID: a.ID, From: store.AddDays(tomorrow, -agencyDays, loc), To: tomorrow, Loc: loc}
	}
	err := together(c.Request().Context(),
		func(ctx context.Context) error {
			counts, err := h.store.Counts(ctx, f.spans, store.CountFilter{NoDelays: true, ByStatus: true})
			f.counts = counts.BySpan(len(f.spans))
			return err
		},
		func(ctx context.Context) (err error) { f.datasets, err = h.store.DatasetsOf(ctx, ids); return },
		func(ctx context.Context) (err error) { f.stages, err = h.store.StagesOf(ctx, ids); return },
		func(ctx context.Context) (err error) { f.mappings, err = h.store.StageMappingsOf(ctx, ids); return },
		func(ctx context.Context) (err error) { f.crmStages, err = h.store.CRMStagesOf(ctx, ids); return },
		func(ctx context.Context) (err error) { f.labels, err = h.store.StageLabelsOf(ctx, ids); return },
		func(ctx context.Context) (err error) { f.lastStage, err = h.store.LastStageUpdates(ctx, ids); return },
		func(ctx context.Context) (err error) { f.stuck, err = h.store.StuckCRMConnections(ctx, ids); return },
		func(ctx context.Context) (err error) {
			f.sequences, err = h.store.LastWeekLearningOf(ctx, zones, now)
			return
		},
	)
	return f, err
}

func (h *Handler) agencyRows(c echo.Context, accounts []models.AccountAccess) ([]views.AccountRow, error) {
	if len(accounts) == 0 {
		return nil, nil
	}
	f, err := h.agencyFacts(c, accounts)
	if err != nil {
		return nil, err
	}
	now := h.now()
	rows := make([]views.AccountRow, len(accounts))
	for i, a := range accounts {
		r := h.agencyRow(a, f, i, now)
		if alert := learningAlert(f.sequences[a.ID]); alert != nil {
			r.Alerts = append(r.Alerts, *alert)
		}
		// The worst first, so the cell reads as the row sorts.
		slices.SortStableFunc(r.Alerts, func(x, y views.AccountAlert) int { return y.Severity - x.Severity })
		rows[i] = r
	}
	// Those that need attention most first, then by name (as listed).
	slices.SortStableFunc(rows, func(x, y views.AccountRow) int { return y.Attention() - x.Attention() })
	return rows, nil
}

// agencyRow is account a's row (the i-th of f): its numbers and every
// alert that holds; none is "All good".
func (h *Handler) agencyRow(a models.AccountAccess, f agencyFacts, i int, now time.Time) views.AccountRow {
	loc := location(a.Account)
	sp := f.spans[i]
	// Links a role cannot follow are not drawn: sales read what editors
	// read (the send log, datasets, stages and CRM connections), viewers
	// the Overview and the leads.
	reader := a.Role.AtLeast(models.RoleSales)
	links := overviewLinks{base: views.AccountURL(a.ID, ""), loc: loc, sendLog: reader}
	link := func(href string) string {
		if reader {
			return href
		}
		return ""
	}
	r := views.AccountRow{Access: a, Days: agencyDays,
		LeadsURL: links.leads(sp.From, sp.To), JunkURL: links.leads(sp.From, sp.To, "junk", "junk")}
	st := overview.Stages(f.stages[a.ID], f.mappings[a.ID])
	fig := overview.Sum(f.counts[i], i, st)
	r.Leads, r.Junk, r.Sent, r.Failed = fig.Leads, fig.Junk, fig.Events[models.EventSent], fig.Events[models.EventFailed]
	r.SentURL = links.events(sp.From, sp.To, "status", string(models.EventSent))
	r.FailedURL = links.events(sp.From, sp.To, "status", string(models.EventFailed))
	// Qualified counts as the Overview's stage rows do: the leads that
	// reached the stage in the window, by when they reached it.
	if q := overview.Qualified(st); q >= 0 {
		r.Qualified, r.QualifiedStage = overview.ReachedIn(f.counts[i], i, st)[q], st[q].Name
	}
	add := func(severity int, text, href string) {
		r.Alerts = append(r.Alerts, views.AccountAlert{Severity: severity, Text: text, Href: href})
	}

	// Datasets: none, paused, held, or still a trial.
	datasets := f.datasets[a.ID]
	if len(datasets) == 0 {
		href := ""
		if a.Role.AtLeast(models.RoleEditor) {
			href = views.AccountURL(a.ID, "/datasets/new")
		}
		add(4, "No destination: nothing reaches Meta or another platform", href)
	}
	sending := false // a dataset that sends: neither a dry run nor paused
	for _, d := range datasets {
		page := link(views.AccountURL(a.ID, "/datasets/"+strconv.FormatInt(d.ID, 10)))
		switch {
		case d.PausedAt != nil:
			add(4, destinationLabel(d)+" paused: "+d.PausedReason, page)
		case d.HeldSince != nil:
			add(3, destinationLabel(d)+" held: "+platform.Name(d.Of())+" failing since "+h.formatTime(a.Account, d.HeldSince), page)
		}
		if d.Mode != models.ModeDryRun && d.PausedAt == nil {
			sending = true
		}
		if days := int64(now.Sub(d.CreatedAt) / (24 * time.Hour)); d.Mode != models.ModeLive && days >= trialDays {
			mode := "dry run"
			if d.Mode == models.ModeTest {
				mode = "test"
			}
			add(2, fmt.Sprintf("%s in %s for %s", destinationLabel(d), mode, views.Plural(days, "day", "days")), page)
		}
	}

	// The window's leads: all junk, or none of the others sent nor on its
	// way (a lead of a minute ago waits for the dispatcher).
	switch {
	case fig.Leads > 0 && fig.Junk == fig.Leads:
		add(3, "All "+views.Plural(fig.Leads, "lead", "leads")+" junk", r.JunkURL)
	case fig.Leads > fig.Junk && r.Sent == 0 && fig.Waiting() == 0 && sending:
		add(3, views.Plural(fig.Leads-fig.Junk, "lead", "leads")+" not junk, nothing sent", r.LeadsURL)
	}
	if r.Failed > 0 {
		add(2, views.Plural(r.Failed, "event", "events")+" failed", r.FailedURL)
	}
	// Held back: our check refused them, a person must change something.
	if held := fig.Events[models.EventHeldBack]; held > 0 {
		add(2, views.Plural(held, "event", "events")+" held back", links.events(sp.From, sp.To, "status", string(models.EventHeldBack)))
	}

	// Stage changes: labels that name no stage, CRM deliveries stuck, none
	// for a day.
	if labels := unmappedLabels(f.stages[a.ID], f.crmStages[a.ID], f.mappings[a.ID], f.labels[a.ID]); len(labels) > 0 {
		add(2, unmappedText(labels), link(views.AccountURL(a.ID, "/stages#unmapped-heading")))
	}
	for _, sc := range f.stuck {
		if sc.AccountID == a.ID {
			add(3, stuckText(sc), link(crmURL(a.ID, sc.ConnectionID, "#deliveries")))
		}
	}
	if last, ok := f.lastStage[a.ID]; ok && now.Sub(last) > staleStages {
		add(1, "no stage update since "+h.formatTime(a.Account, &last), "")
	}
	return r
}

// learningAlert is the alert of an account's first sequence (of seqs,
// counted over two weeks) whose last week was limited in learning, nil
// when none was.
func learningAlert(seqs []store.SequenceCount) *views.AccountAlert {
	for _, sc := range seqs {
		if w := sc.Weeks[0]; w.Limited() {
			return &views.AccountAlert{Severity: 1,
				Text: "learning limited: " + sc.Sequence.FinalEvent + " " + views.Plural(w.Complete, "sequence", "sequences") + " last week"}
		}
	}
	return nil
}

// unmappedLabels keeps, of the stage labels an account's changes were
// recorded with, those the Stages page lists under "Not in the list": they
// name none of its stages (by name, alias or mapped CRM label, as the
// recorder reads them, name.Stages) and no stage mapping's stage (rules of
// other modes name none). Labels that read as one (name.StageKey) are one,
// the first spelling kept. The Stages page and the agency overview both
// ask it.
func unmappedLabels(stages []models.Stage, crmStages []models.CRMStage, mappings []models.SendRule, labels []string) []string {
	ix := name.NewStages(stages, crmStages)
	seen := map[string]bool{}
	for _, m := range mappings {
		seen[labelKey(m.Stage)] = true
	}
	var out []string
	for _, l := range labels {
		k := labelKey(l)
		if seen[k] || ix.Index(l) >= 0 {
			continue
		}
		seen[k] = true
		out = append(out, l)
	}
	return out
}

// unmappedText names the first labels and how many more there are.
func unmappedText(labels []string) string {
	shown := labels[:min(len(labels), maxLabelsShown)]
	quoted := make([]string, len(shown))
	for i, l := range shown {
		quoted[i] = strconv.Quote(name.Cut(l, 40))
	}
	text := views.Plural(int64(len(labels)), "stage label", "stage labels") + " not in the list: " + strings.Join(quoted, ", ")
	if more := len(labels) - len(shown); more > 0 {
		text += fmt.Sprintf(" and %d more", more)
	}
	return text
}

// agencyCSV writes the agency overview's table as CSV.
func agencyCSV(c echo.Context, rows []views.AccountRow) error {
	w := startCSV(c, "accounts.csv")
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	if err := w.Write([]string{"account", "slug", "days", "leads", "junk", "qualified", "sent", "failed", "alerts", "role"}); err != nil {
		return err
	}
	for _, r := range rows {
		alerts := make([]string, len(r.Alerts))
		for i, a := range r.Alerts {
			alerts[i] = a.Text
		}
		if err := w.Write([]string{r.Access.Name, r.Access.Slug, strconv.Itoa(r.Days), n(r.Leads), n(r.Junk), n(r.Qualified), n(r.Sent), n(r.Failed),
			strings.Join(alerts, "; "), string(r.Access.Role)}); err != nil {
			return err
		}
	}
	return w.Close(nil)
}
