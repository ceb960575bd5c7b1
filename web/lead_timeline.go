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
	from := changeSources{h: h, a: a, users: map[int64]string{}, uploads: map[int64]*models.StageUpload{},
		conns: map[int64]*models.CRMConnection{}}
	for _, sc := range changes {
		it := views.TimelineItem{Kind: "stage", What: "Stage: " + stageWords(ix, sc.Stage)}
		switch sc.Stage {
		case models.StageJunk:
			it.What = "Marked junk"
		case models.StageNotJunk:
			it.What = "Marked not junk"
		}
		if sc.Value != nil {
			it.Value = views.StageValue(*sc.Value, sc.Currency)
		}
		if it.Detail, it.SourceLink, err = from.of(ctx, sc); err != nil {
			return nil, err
		}
		add(sc.OccurredAt, it)
	}

	for _, e := range evs {
		var ds models.Dataset
		if i := slices.IndexFunc(datasets, func(d models.Dataset) bool { return d.ID == e.DatasetID }); i >= 0 {
			ds = datasets[i]
		}
		it := views.TimelineItem{Kind: "event", What: e.EventName + " for " + ds.Name,
			Badge: views.EventStatusWord(e.State()), BadgeClass: views.EventStatusBadge(e.State()),
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
		return views.EventReason(e)
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

// changeSources says where a lead's stage changes came from, reading each
// person, key, upload and delivery once.
type changeSources struct {
	h     *Handler
	a     models.Account
	users map[int64]string
	keys  []models.IngestKey
	read  bool // keys read
	// uploads and conns are those read so far, by id (nil: none found).
	uploads map[int64]*models.StageUpload
	conns   map[int64]*models.CRMConnection
}

// upload is the account's stage upload id, read once; nil when gone.
func (cs *changeSources) upload(ctx context.Context, id int64) (*models.StageUpload, error) {
	if u, ok := cs.uploads[id]; ok {
		return u, nil
	}
	u, err := cs.h.store.StageUpload(ctx, cs.a.ID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		cs.uploads[id] = nil
		return nil, nil
	case err != nil:
		return nil, err
	}
	cs.uploads[id] = &u
	return &u, nil
}

// conn is the account's CRM connection id, read once; nil when gone.
func (cs *changeSources) conn(ctx context.Context, id int64) (*models.CRMConnection, error) {
	if c, ok := cs.conns[id]; ok {
		return c, nil
	}
	c, err := cs.h.store.CRMConnection(ctx, cs.a.ID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		cs.conns[id] = nil
		return nil, nil
	case err != nil:
		return nil, err
	}
	cs.conns[id] = &c
	return &c, nil
}

// of is where stage change sc came from, in words ("by ana@example.com",
// "by the stage API with the key Zapier", "from upload #12 (deals.csv,
// row 31)", "from HubSpot (the connection Sales CRM)") and a link to it
// when it has a page.
func (cs *changeSources) of(ctx context.Context, sc models.StageChange) (string, string, error) {
	id := int64(0)
	if sc.ViaID != nil {
		id = *sc.ViaID
	}
	switch {
	case sc.UserID != nil:
		name, ok := cs.users[*sc.UserID]
		if !ok {
			u, err := cs.h.store.UserByID(ctx, *sc.UserID)
			switch {
			case errors.Is(err, store.ErrNotFound):
				name = "a person since removed"
			case err != nil:
				return "", "", err
			default:
				name = u.Email
			}
			cs.users[*sc.UserID] = name
		}
		return "by " + name, "", nil
	case sc.Via == models.ViaAPI:
		if !cs.read {
			var err error
			if cs.keys, err = cs.h.store.IngestKeys(ctx, cs.a.ID); err != nil {
				return "", "", err
			}
			cs.read = true
		}
		if i := slices.IndexFunc(cs.keys, func(k models.IngestKey) bool { return k.ID == id }); i >= 0 {
			return "by the stage API with the key " + strconv.Quote(cs.keys[i].Name), "", nil
		}
		return "by the stage API with a key since deleted", "", nil
	case sc.Via == models.ViaUpload:
		where := "from upload #" + strconv.FormatInt(id, 10)
		u, err := cs.upload(ctx, id)
		switch {
		case err != nil:
			return "", "", err
		case u == nil:
			return where + " (since deleted)", "", nil
		}
		where += " (" + u.FileName
		if sc.ViaRow != nil {
			where += ", row " + strconv.Itoa(*sc.ViaRow)
		}
		return where + ")", views.AccountURL(cs.a.ID, "/stages/uploads/"+strconv.FormatInt(id, 10)), nil
	case sc.Via == models.ViaCRM:
		d, err := cs.h.store.CRMDelivery(ctx, cs.a.ID, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return "from " + cmp.Or(sc.Source, "a CRM") + " (a connection since deleted)", "", nil
		case err != nil:
			return "", "", err
		}
		conn, err := cs.conn(ctx, d.ConnectionID)
		switch {
		case err != nil:
			return "", "", err
		case conn == nil:
			return "from " + cmp.Or(sc.Source, "a CRM") + " (a connection since deleted)", "", nil
		}
		return "from the CRM connection " + strconv.Quote(conn.Name) + ", delivery #" + strconv.FormatInt(d.ID, 10),
			crmURL(cs.a.ID, conn.ID, "?before="+strconv.FormatInt(d.ID+1, 10)+"#delivery-"+strconv.FormatInt(d.ID, 10)), nil
	case sc.Via == models.ViaDemo:
		return "by the demo", "", nil
	case sc.Source != "":
		return "from " + sc.Source, "", nil
	}
	// Recorded before leadsignal kept where changes came from.
	return "by the stage API, a CSV upload or a webhook", "", nil
}
