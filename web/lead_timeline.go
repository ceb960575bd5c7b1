package web

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// leadTimeline is what happened to a lead, oldest first: captured, the
// junk signals' verdict, each stage change, each event made for Meta
// with Meta's answer.
func (h *Handler) leadTimeline(ctx context.Context, a models.Account, l models.Lead, changes []models.StageChange,
	evs []models.Event, datasets []models.Dataset) ([]views.TimelineItem, error) {
	now, loc := h.now(), location(a)
	stamp := func(t time.Time) views.Stamp { return views.NewStamp(t, now, loc) }
	type dated struct {
		at   time.Time
		item views.TimelineItem
	}
	var items []dated
	add := func(at time.Time, it views.TimelineItem) {
		it.When = stamp(at)
		items = append(items, dated{at, it})
	}

	captured := views.TimelineItem{Kind: "captured", What: "Captured from " + views.SourceLabel(l.Source)}
	if l.Partial {
		captured.Badge, captured.BadgeClass = "partial", "warn"
		captured.Detail = "Sent before the form was complete."
	}
	if l.ReceivedAt.Sub(l.CreatedAt) > time.Minute {
		captured.Detail += " Received " + stamp(l.ReceivedAt).Short + "."
	}
	add(l.CreatedAt, captured)

	verdict := views.TimelineItem{Kind: "junk", What: "No junk signal fired", Badge: "not junk", BadgeClass: "ok"}
	if reasons := firedSignals(l); len(reasons) > 0 {
		verdict.What = "Junk: " + views.Plural(int64(len(reasons)), "signal fired", "signals fired")
		verdict.Badge, verdict.BadgeClass = "junk", "bad"
		for _, r := range reasons {
			verdict.Reasons = append(verdict.Reasons, r.Message)
		}
	}
	add(l.ReceivedAt, verdict)

	ix, err := h.stageNames(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	users := map[int64]string{}
	for _, sc := range changes {
		it := views.TimelineItem{Kind: "stage", What: "Stage: " + stageWords(ix, sc.Stage), Detail: "by the stage API, a CSV upload or a webhook"}
		switch sc.Stage {
		case models.StageJunk:
			it.What = "Marked junk"
		case models.StageNotJunk:
			it.What = "Marked not junk"
		}
		if sc.Value != nil {
			it.Value = views.StageValue(*sc.Value, sc.Currency)
		}
		if sc.Source != "" {
			it.Detail = "from " + sc.Source
		}
		if sc.UserID != nil {
			name, ok := users[*sc.UserID]
			if !ok {
				u, err := h.store.UserByID(ctx, *sc.UserID)
				switch {
				case errors.Is(err, store.ErrNotFound):
					name = "a person since removed"
				case err != nil:
					return nil, err
				default:
					name = u.Email
				}
				users[*sc.UserID] = name
			}
			it.Detail = "by " + name
		}
		add(sc.OccurredAt, it)
	}

	for _, e := range evs {
		var ds models.Dataset
		if i := slices.IndexFunc(datasets, func(d models.Dataset) bool { return d.ID == e.DatasetID }); i >= 0 {
			ds = datasets[i]
		}
		it := views.TimelineItem{Kind: "event", What: e.EventName + " for " + ds.Name,
			Badge: views.EventStatusWord(e.Status), BadgeClass: views.EventStatusBadge(e.Status),
			Detail: eventAnswer(e, ds, stamp),
			Link:   views.AccountURL(a.ID, "/events/"+strconv.FormatInt(e.ID, 10))}
		if e.FilledIn {
			it.What += " (filled in)"
		}
		add(e.CreatedAt, it)
	}
	// Oldest first; at one moment, in the order they were added.
	slices.SortStableFunc(items, func(x, y dated) int { return cmp.Compare(x.at.UnixNano(), y.at.UnixNano()) })
	out := make([]views.TimelineItem, len(items))
	for i, d := range items {
		out[i] = d.item
	}
	return out, nil
}

// stageNames finds an account's stages by the labels changes were
// recorded under, as the recorder does (name.Stages): names, aliases and
// its CRM connections' mapped labels.
func (h *Handler) stageNames(ctx context.Context, accountID int64) (name.Stages, error) {
	stages, err := h.store.Stages(ctx, accountID)
	if err != nil {
		return name.Stages{}, err
	}
	rows, err := h.store.MappedCRMStages(ctx, accountID)
	return name.NewStages(stages, rows), err
}

// stageWords is the label a change was recorded under as the lead page
// says it: the account's stage ("won"); the stage and the label when it
// was recorded under another of the stage's labels, such as a label that
// became an alias later ("won, as 'Closed Won'"); and a label that names
// no stage as what it is ("'Closed Lost' (not one of the account's
// stages)").
func stageWords(ix name.Stages, label string) string {
	st, ok := ix.Resolve(label)
	switch {
	case !ok:
		return quoteLabel(label) + " (not one of the account's stages)"
	case name.StageKey(st) == name.StageKey(label):
		return st
	}
	return st + ", as " + quoteLabel(label)
}

// eventAnswer says what became of an event: Meta's answer once it was
// sent or refused, else why it waits or was not sent.
func eventAnswer(e models.Event, ds models.Dataset, stamp func(time.Time) views.Stamp) string {
	switch e.Status {
	case models.EventSent:
		s := "Meta received it"
		if e.SentAt != nil {
			s += ", sent " + stamp(*e.SentAt).Short
		}
		if e.FBTraceID != "" {
			s += " (trace " + e.FBTraceID + ")"
		}
		return s + "."
	case models.EventFailed, models.EventExpired:
		return e.LastError
	case models.EventDryRun:
		return ds.Name + " is in dry-run mode: the event was built and logged, not sent."
	case models.EventQueued:
		switch {
		case ds.PausedAt != nil:
			return ds.Name + " is paused: " + ds.PausedReason + " Nothing is sent until a person saves a new token."
		case ds.HeldSince != nil:
			return "Meta or the network is failing " + ds.Name + "'s requests; it waits and goes once they pass."
		case e.LastError != "":
			return "Tried " + views.Plural(int64(e.Attempts), "time", "times") + ": " + e.LastError + " Next try " + stamp(e.NextAttemptAt).Short + "."
		}
		return "Goes out within seconds."
	}
	return ""
}
