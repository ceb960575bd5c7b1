package store

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/leadsignal/leadsignal/models"
)

// EventFilter narrows the send log; zero values mean "any".
type EventFilter struct {
	Status    models.EventStatus
	EventName string
	DatasetID int64
	From, To  time.Time
	// Leads, when set, keeps the events of the leads it keeps (the
	// Overview's numbers count events by their leads' capture).
	Leads *LeadFilter
}

// shownStatus is an event's status as people see it: a claim leases
// events without changing their status (0004), so a queued event whose
// lease still runs is sending. It is sendingSQL's test, in Go.
func shownStatus(e models.Event, now time.Time) models.EventStatus {
	if e.Status == models.EventQueued && e.LeaseUntil != nil && e.LeaseUntil.After(now) {
		return models.EventSending
	}
	return e.Status
}

// A failed event reads as one of three states, by its reason
// (models.Event.State): failedSQL, heldBackSQL and notSentSQL are those
// tests in SQL, each written once, over unsent_events' columns (row
// prefixes them: "" or "q."). A reason is compared by its first
// characters (substr), which reads the same on both databases: SQLite's
// LIKE ignores case.

// failedSQL is "failed": Meta refused the event, or it failed before
// reasons were kept.
func failedSQL(row string) string {
	return row + "status = 'failed' AND NOT " + prefixSQL(row+"last_error", models.ReasonNotSent) +
		" AND " + row + "last_error <> " + textSQL(models.ReasonLeadGone)
}

// heldBackSQL is "held back": our check refused the event before sending.
func heldBackSQL(row string) string {
	return row + "status = 'failed' AND " + prefixSQL(row+"last_error", models.ReasonNotSent) +
		" AND NOT (" + notSentSQL(row) + ")"
}

// notSentSQL is "not sent": a decision cancelled the event
// (models.Cancelled), or its lead is gone.
func notSentSQL(row string) string {
	e := row + "last_error"
	return row + "status = 'failed' AND (" + e + " = " + textSQL(models.ReasonJunkLead) + " OR " +
		prefixSQL(e, models.ReasonNoLonger) + " OR " + e + " = " + textSQL(models.ReasonLeadGone) + " OR " +
		e + " = " + textSQL(models.ReasonTestLead) + ")"
}

// prefixSQL tests that column starts with prefix, an ASCII constant.
func prefixSQL(column, prefix string) string {
	return sprintf("substr(%s, 1, %d) = %s", column, len(prefix), textSQL(prefix))
}

// textSQL is a constant as an SQL string literal.
func textSQL(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// EventCursor is the position after the last event of a page.
type EventCursor struct {
	CreatedAt time.Time
	ID        int64
}

func (s *Store) filterEvents(ctx context.Context, accountID int64, f EventFilter, withStatus bool, now time.Time) *gorm.DB {
	q := s.q(ctx).Model(&models.Event{}).Where("events.account_id = ?", accountID)
	if withStatus && f.Status != "" {
		if f.Status == models.EventSent {
			// A probe of event_sends' key per event, which an index of
			// events can feed without reading the events themselves.
			q = q.Where(sentSQL)
		} else {
			// Every other status is indexed in unsent_events, per dataset.
			datasets := s.accountDatasets(ctx, accountID, f.DatasetID)
			q = q.Where("events.id IN (?)", s.unsentWithStatus(ctx, datasets, f.Status, now).Select("event_id"))
		}
	}
	if f.EventName != "" {
		q = q.Where("events.event_name = ?", f.EventName)
	}
	if f.DatasetID != 0 {
		q = q.Where("events.dataset_id = ?", f.DatasetID)
	}
	if !f.From.IsZero() {
		q = q.Where("events.created_at >= ?", f.From.UTC())
	}
	if !f.To.IsZero() {
		q = q.Where("events.created_at < ?", f.To.UTC())
	}
	if f.Leads != nil {
		q = q.Where("events.lead_id IN (?)", s.filterLeads(ctx, accountID, *f.Leads).Select("id"))
	}
	return q
}

// accountDatasets selects the ids of an account's datasets: all of them,
// or the one given if it is the account's.
func (s *Store) accountDatasets(ctx context.Context, accountID, datasetID int64) *gorm.DB {
	q := s.q(ctx).Model(&models.Dataset{}).Select("id").Where("account_id = ?", accountID)
	if datasetID != 0 {
		q = q.Where("id = ?", datasetID)
	}
	return q
}

// unsentWithStatus selects the unsent events of datasets (a subquery of
// ids) that have status as people see it: a queued event under a running
// lease is sending.
func (s *Store) unsentWithStatus(ctx context.Context, datasets *gorm.DB, status models.EventStatus, now time.Time) *gorm.DB {
	cond, args := unsentStatusSQL("", status, now)
	return s.q(ctx).Model(&unsentEvent{}).Where("dataset_id IN (?)", datasets).Where(cond, args...)
}

// unsentStatusSQL tests that an unsent event (its unsent_events columns
// prefixed by row: "" or "u.") has status as people see it at now, with
// the test's arguments.
func unsentStatusSQL(row string, status models.EventStatus, now time.Time) (string, []any) {
	switch status {
	case models.EventSending:
		return sendingSQL(row, "?", true), []any{now}
	case models.EventQueued:
		return sendingSQL(row, "?", false), []any{now}
	case models.EventFailed:
		return failedSQL(row), nil
	case models.EventHeldBack:
		return heldBackSQL(row), nil
	case models.EventNotSent:
		return notSentSQL(row), nil
	default:
		return row + "status = ?", []any{status}
	}
}

// fewUnsent is how many events of one unsent status Events reads by id:
// Postgres plans an IN list of 5000 in about 6 ms and checks it by hash
// while it reads an index of events newest first; one in 200 events failed
// is 5000 in a million.
var fewUnsent = 5000

// Events lists an account's events matching f, newest first. The page's
// ids are found first, from an index of events where the filter allows,
// and only then are those events read: an event's row holds its JSON, and
// a filter that skips many events would otherwise read each one.
func (s *Store) Events(ctx context.Context, accountID int64, f EventFilter, after *EventCursor, limit int) ([]models.Event, error) {
	now := s.Now()
	const newestFirst = "events.created_at DESC, events.id DESC"
	ids := s.filterEvents(ctx, accountID, f, true, now).Select("events.id")
	if f.Status != "" && f.Status != models.EventSent {
		// A status but sent is usually a few events among many: take them
		// from unsent_events, rather than look for them among all events
		// newest first. Past fewUnsent, there are enough of them to find
		// a page soon that way.
		var unsent []int64
		err := s.unsentWithStatus(ctx, s.accountDatasets(ctx, accountID, f.DatasetID), f.Status, now).
			Limit(fewUnsent+1).Pluck("event_id", &unsent).Error
		if err != nil {
			return nil, wrap("list events", err)
		}
		if len(unsent) == 0 {
			return nil, nil
		}
		status := f.Status
		f.Status = ""
		ids = s.filterEvents(ctx, accountID, f, false, now).Select("events.id")
		if len(unsent) <= fewUnsent {
			ids = ids.Where("events.id IN ?", unsent)
		} else {
			// Many: the page is among the newest events, read from
			// events_account_idx newest first, each looked up in
			// unsent_events by its key. As a join, Postgres would read
			// the row of every event with the status to sort them all.
			cond, args := unsentStatusSQL("u.", status, now)
			ids = ids.Where("(SELECT "+cond+" FROM unsent_events u WHERE u.event_id = events.id)", args...)
		}
	}
	if after != nil {
		// A row comparison, which Postgres reads as a range of
		// events_account_idx (account_id, created_at DESC, id DESC): an
		// OR of the two columns would scan the index from the newest event
		// down to the page.
		ids = ids.Where("(events.created_at, events.id) < (?, ?)", after.CreatedAt.UTC(), after.ID)
	}
	ids = ids.Order(newestFirst).Limit(limit)
	evs, err := findShown(withState(s.q(ctx).Model(&models.Event{})).Where("events.id IN (?)", ids).Order(newestFirst), now)
	return evs, wrap("list events", err)
}

// EventCounts counts an account's events matching f (its status aside) per
// status, each count stopping at limit: a page shows "10,000+" rather than
// count a million sent events on every view. Each count but the sent one
// reads the index of unsent_events; sent events are most events.
func (s *Store) EventCounts(ctx context.Context, accountID int64, f EventFilter, limit int) (map[models.EventStatus]int64, error) {
	now := s.Now()
	if f.EventName == "" && f.From.IsZero() && f.To.IsZero() && f.Leads == nil {
		return s.queueCounts(ctx, accountID, f.DatasetID, limit, now)
	}
	out := map[models.EventStatus]int64{}
	for _, st := range models.EventStatuses {
		f.Status = st
		n, err := s.countUpTo(ctx, s.filterEvents(ctx, accountID, f, true, now), limit)
		if err != nil {
			return nil, wrap("count events", err)
		}
		if n > 0 {
			out[st] = n
		}
	}
	return out, nil
}

// queueCounts is EventCounts filtered by dataset at most: the account's
// counts summed over its destinations (destinationCounts), each stopping
// at limit.
func (s *Store) queueCounts(ctx context.Context, accountID, datasetID int64, limit int, now time.Time) (map[models.EventStatus]int64, error) {
	byDest, err := s.destinationCounts(ctx, accountID, datasetID, now)
	if err != nil {
		return nil, err
	}
	sum := map[models.EventStatus]int64{}
	for _, counts := range byDest {
		for st, n := range counts {
			sum[st] += n
		}
	}
	return capCounts(sum, limit), nil
}

// DestinationCounts is EventCounts filtered by each of the account's
// destinations in turn, by destination id, from one read: the
// Destinations page's figures, each the rows the send log shows for it.
// A destination without events has no entry.
func (s *Store) DestinationCounts(ctx context.Context, accountID int64, limit int) (map[int64]map[models.EventStatus]int64, error) {
	byDest, err := s.destinationCounts(ctx, accountID, 0, s.Now())
	for id, counts := range byDest {
		byDest[id] = capCounts(counts, limit)
	}
	return byDest, err
}

// capCounts keeps the positive counts, each stopping at limit: a page
// shows "10,000+" rather than count a million sent events.
func capCounts(counts map[models.EventStatus]int64, limit int) map[models.EventStatus]int64 {
	out := map[models.EventStatus]int64{}
	for st, n := range counts {
		if n > 0 {
			out[st] = min(n, int64(limit))
		}
	}
	return out
}

// destinationCounts counts an account's events (of one destination when
// datasetID is not 0) by destination and state as people read them, reading
// no event's row. Every state but sending is the sum of the account's
// event_counts rows (kept by triggers by account, destination and state,
// store/counts.go). An event is sending while it is stored queued under a
// running lease: those are counted in unsent_events, among its queued rows
// only, and taken from the queued. One statement, so that both counts see
// the same moment. The datasets are a subquery Postgres may not flatten
// (DISTINCT): one destination's id would otherwise be planned as a
// constant whose statistics say it has most of the table's rows, and the
// queued rows read by a scan of the whole table.
func (s *Store) destinationCounts(ctx context.Context, accountID, datasetID int64, now time.Time) (map[int64]map[models.EventStatus]int64, error) {
	where := "account_id = ?"
	args := []any{accountID}
	if datasetID != 0 {
		where += " AND dataset_id = ?"
		args = append(args, datasetID)
	}
	// Merged rows and deltas each read their own partial index.
	q := `SELECT dataset_id, status, CAST(SUM(n) AS bigint) AS n FROM (
		SELECT dataset_id, status, n FROM event_counts WHERE NOT delta AND ` + where + `
		UNION ALL SELECT dataset_id, status, n FROM event_counts WHERE delta AND ` + where + `) c GROUP BY dataset_id, status
	UNION ALL SELECT dataset_id, ` + textSQL(string(models.EventSending)) + `, COUNT(*) FROM unsent_events
		WHERE dataset_id IN (SELECT DISTINCT id FROM (?) d) AND ` + sendingSQL("", "?", true) + ` GROUP BY dataset_id`
	args = append(append(args, args...), s.accountDatasets(ctx, accountID, datasetID), now)
	var groups []struct {
		DatasetID int64
		Status    models.EventStatus
		N         int64
	}
	if err := s.q(ctx).Raw(q, args...).Scan(&groups).Error; err != nil {
		return nil, wrap("count events", err)
	}
	out := map[int64]map[models.EventStatus]int64{}
	for _, g := range groups {
		if out[g.DatasetID] == nil {
			out[g.DatasetID] = map[models.EventStatus]int64{}
		}
		out[g.DatasetID][g.Status] += g.N
	}
	for _, counts := range out {
		counts[models.EventQueued] -= counts[models.EventSending]
	}
	return out, nil
}

// countUpTo counts the rows q selects, stopping at limit.
func (s *Store) countUpTo(ctx context.Context, q *gorm.DB, limit int) (int64, error) {
	var n int64
	err := s.q(ctx).Table("(?) AS matching", q.Select("1").Limit(limit)).Count(&n).Error
	return n, err
}

// Event finds one event of an account.
func (s *Store) Event(ctx context.Context, accountID, id int64) (models.Event, error) {
	evs, err := findShown(withState(s.q(ctx).Model(&models.Event{})).
		Where("events.account_id = ? AND events.id = ?", accountID, id).Limit(1), s.Now())
	if err == nil && len(evs) == 0 {
		return models.Event{}, ErrNotFound
	}
	if err != nil {
		return models.Event{}, wrap("event", err)
	}
	return evs[0], nil
}

// FailedEventIDs lists the ids of an account's events stored failed (held
// back, failed or not sent, as people read them), those of ids or all when
// ids is empty, in id order: read from unsent_events' index of statuses,
// without the events' rows.
func (s *Store) FailedEventIDs(ctx context.Context, accountID int64, ids []int64, now time.Time) ([]int64, error) {
	q := s.q(ctx).Model(&unsentEvent{}).Where("dataset_id IN (?) AND status = ?", s.accountDatasets(ctx, accountID, 0), models.EventFailed)
	if len(ids) > 0 {
		q = q.Where("event_id IN ?", ids)
	}
	var out []int64
	err := q.Order("event_id").Pluck("event_id", &out).Error
	return out, wrap("failed event ids", err)
}

// NewestFailedEventIDs lists the ids of an account's newest failed events,
// at most limit, newest first.
func (s *Store) NewestFailedEventIDs(ctx context.Context, accountID int64, limit int) ([]int64, error) {
	var out []int64
	err := s.q(ctx).Model(&unsentEvent{}).Where("dataset_id IN (?) AND status = ?", s.accountDatasets(ctx, accountID, 0), models.EventFailed).
		Order("event_id DESC").Limit(limit).Pluck("event_id", &out).Error
	return out, wrap("newest failed event ids", err)
}

// FailedEvents reads an account's failed events of ids with their state
// and payload as at now, for Retry to decide which may succeed.
func (s *Store) FailedEvents(ctx context.Context, accountID int64, ids []int64, now time.Time) ([]models.Event, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	evs, err := findShown(withState(s.q(ctx).Model(&models.Event{})).
		Where("events.account_id = ? AND events.id IN ? AND unsent_events.status = ?", accountID, ids, models.EventFailed).
		Order("events.id"), now.UTC())
	return evs, wrap("failed events", err)
}

// LeadNames finds an account's leads by id with only what names them
// (first and last name, email, phone), for a page of events; a lead not
// found is absent.
func (s *Store) LeadNames(ctx context.Context, accountID int64, ids []int64) (map[int64]models.Lead, error) {
	out := make(map[int64]models.Lead, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var ls []models.Lead
	err := s.q(ctx).Select("id, first_name, last_name, email, phone").
		Where("account_id = ? AND id IN ?", accountID, ids).Find(&ls).Error
	if err != nil {
		return nil, wrap("lead names", err)
	}
	for _, l := range ls {
		out[l.ID] = l
	}
	return out, nil
}

// RetryEvents queues an account's failed events again now, with a fresh
// count of attempts: all failed ones when ids is empty. It returns how many
// it queued.
func (s *Store) RetryEvents(ctx context.Context, accountID int64, ids []int64, now time.Time) (int64, error) {
	now = now.UTC()
	// Whether a junk lead's event may go is the dispatcher's to decide
	// when it builds the event again (decide.Matchers.Holds): a rule that
	// requires junk sends it, any other holds it back again.
	where := "status = ? AND dataset_id IN (SELECT id FROM datasets WHERE account_id = ?)"
	args := []any{models.EventQueued, now, now, models.EventFailed, accountID}
	if len(ids) > 0 {
		where += " AND event_id IN ?"
		args = append(args, ids)
	}
	var queued []int64
	err := s.Tx(ctx, func(tx *Store) error {
		err := tx.q(ctx).Raw(`UPDATE unsent_events SET status = ?, attempts = 0, last_error = '', next_attempt_at = ?,
			lease_until = NULL, updated_at = ? WHERE `+where+" RETURNING event_id", args...).Scan(&queued).Error
		if err != nil || len(queued) == 0 {
			return err
		}
		// Built again when sent: the retry may follow a fix of the lead
		// or the settings.
		in, list := tx.idList("id", queued)
		return tx.q(ctx).Model(&models.Event{}).Where(in, list).Update("payload_stamp", 0).Error
	})
	return int64(len(queued)), wrap("retry events", err)
}

// SendRequests lists a dataset's latest requests to Meta, without their
// payloads.
func (s *Store) SendRequests(ctx context.Context, accountID, datasetID int64, limit int) ([]models.SendRequest, error) {
	var rs []models.SendRequest
	err := s.q(ctx).Omit("payload").Where("account_id = ? AND dataset_id = ?", accountID, datasetID).
		Order("started_at DESC, id DESC").Limit(limit).Find(&rs).Error
	return rs, wrap("send requests", err)
}

// SendRequest finds one request of an account.
func (s *Store) SendRequest(ctx context.Context, accountID, id int64) (models.SendRequest, error) {
	var r models.SendRequest
	err := s.q(ctx).Where("account_id = ? AND id = ?", accountID, id).Take(&r).Error
	return r, wrap("send request", err)
}

// ResumeDataset clears a dataset's pause, after a person saved a new token,
// and queues its waiting events at once.
func (s *Store) ResumeDataset(ctx context.Context, accountID, id int64, now time.Time) error {
	return wrap("resume dataset", s.Tx(ctx, func(tx *Store) error {
		res := tx.q(ctx).Model(&models.Dataset{}).Where("account_id = ? AND id = ?", accountID, id).
			Updates(map[string]any{"paused_at": nil, "paused_reason": "", "updated_at": now.UTC()})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		return tx.q(ctx).Model(&unsentEvent{}).Where("dataset_id = ? AND status = ?", id, models.EventQueued).
			Update("next_attempt_at", now.UTC()).Error
	}))
}

// exportBatch is how many events EachEvents reads at a time.
var exportBatch = 500

// EachEvents calls fn with the account's events matching f, newest first,
// a batch at a time: the send log's CSV, which holds exactly the page's
// rows, as Events finds them, without reading them all into memory. Each
// batch starts after the last one's cursor; an event queued meanwhile is
// newer than them all and left out.
func (s *Store) EachEvents(ctx context.Context, accountID int64, f EventFilter, fn func([]models.Event) error) error {
	var after *EventCursor
	for {
		evs, err := s.Events(ctx, accountID, f, after, exportBatch)
		if err != nil || len(evs) == 0 {
			return err
		}
		if err := fn(evs); err != nil {
			return err
		}
		if len(evs) < exportBatch {
			return nil
		}
		last := evs[len(evs)-1]
		after = &EventCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
}
