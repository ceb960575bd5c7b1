package store

import (
	"context"
	"database/sql"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/leadsignal/leadsignal/models"
)

// unsentEvent is an event's row in unsent_events while it is not sent
// (migration 0006): its status, indexed there and not on events, and while
// it is queued its schedule. A sent event has no such row, so marking a
// batch sent changes no indexed column of events.
type unsentEvent struct {
	EventID       int64 `gorm:"primaryKey;autoIncrement:false"`
	DatasetID     int64
	LeadID        int64
	Status        models.EventStatus
	EventTime     time.Time
	NextAttemptAt time.Time
	LeaseUntil    *time.Time
}

func (unsentEvent) TableName() string { return "unsent_events" }

// eventSend is the send of an event (migration 0010): which request carried
// it, on which attempt, with which trace and when. An event is sent when it
// has one; sending writes nothing to the event's own row.
type eventSend struct {
	EventID   int64 `gorm:"primaryKey;autoIncrement:false"`
	RequestID *int64
	Attempts  int
	FBTraceID string `gorm:"column:fbtrace_id"`
	SentAt    time.Time
}

func (eventSend) TableName() string { return "event_sends" }

// shownEvent is an event read with its schedule and its send.
type shownEvent struct {
	models.Event
	SendRequestID *int64
	SendAttempts  *int
	SendFBTraceID *string `gorm:"column:send_fbtrace_id"`
	SendSentAt    *time.Time
}

// withSchedule selects events with their schedule (a queued event's, in
// unsent_events) and their send (event_sends), for findShown.
func withSchedule(q *gorm.DB) *gorm.DB {
	return q.Select(`events.*, unsent_events.next_attempt_at, unsent_events.lease_until,
		event_sends.request_id AS send_request_id, event_sends.attempts AS send_attempts,
		event_sends.fbtrace_id AS send_fbtrace_id, event_sends.sent_at AS send_sent_at`).
		Joins("LEFT JOIN unsent_events ON unsent_events.event_id = events.id").
		Joins("LEFT JOIN event_sends ON event_sends.event_id = events.id")
}

// findShown runs a withSchedule query and returns its events as people see
// them: a sent event's status, attempts, error, trace, request and time are
// its send's, as its own row keeps what it was before; a queued event under
// a lease is sending.
func findShown(q *gorm.DB, now time.Time) ([]models.Event, error) {
	var rows []shownEvent
	if err := q.Find(&rows).Error; err != nil {
		return nil, err
	}
	evs := make([]models.Event, len(rows))
	for i, r := range rows {
		e := r.Event
		if r.SendSentAt != nil {
			e.Status, e.Attempts, e.LastError = models.EventSent, *r.SendAttempts, ""
			e.FBTraceID, e.RequestID, e.SentAt, e.UpdatedAt = *r.SendFBTraceID, r.SendRequestID, r.SendSentAt, *r.SendSentAt
		}
		e.Status = shownStatus(e, now)
		evs[i] = e
	}
	return evs, nil
}

// addUnsent gives stored events that are not sent their unsent_events row,
// due at their NextAttemptAt. An event that has one keeps it.
func (s *Store) addUnsent(ctx context.Context, evs []models.Event) error {
	rows := make([]unsentEvent, 0, len(evs))
	for _, e := range evs {
		if e.Status != models.EventSent {
			rows = append(rows, unsentEvent{EventID: e.ID, DatasetID: e.DatasetID, LeadID: e.LeadID, Status: e.Status,
				EventTime: e.EventTime.UTC(), NextAttemptAt: e.NextAttemptAt.UTC()})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	return s.q(ctx).Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(&rows, 500).Error
}

// EnqueueEvents inserts events into the outbox. An event whose
// (dataset_id, event_id) is already there is left as it is: a resent form,
// a retried webhook or a replayed sync can never queue a second copy. It
// returns every given event as stored, new or old.
func (s *Store) EnqueueEvents(ctx context.Context, evs []models.Event) ([]models.Event, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	for i := range evs {
		evs[i].ID = 0
	}
	queue(evs, time.Now().UTC())
	var out []models.Event
	err := s.Tx(ctx, func(tx *Store) error {
		var fresh []models.Event
		var err error
		if out, fresh, err = tx.insertEvents(ctx, evs); err != nil {
			return err
		}
		// Only the events this call stored: an old one may have been sent
		// a moment ago, and must not be queued again.
		return tx.addUnsent(ctx, fresh)
	})
	if err != nil {
		return nil, wrap("enqueue events", err)
	}
	return out, nil
}

// insertEvents inserts the events that are not stored yet. It returns each
// given event as stored, and the ones it inserted. One statement per event:
// a skipped row is then known for certain (no row affected), where a
// multi-row INSERT ... RETURNING would not say which rows it skipped.
func (s *Store) insertEvents(ctx context.Context, evs []models.Event) (all, fresh []models.Event, err error) {
	byDataset := map[int64][]string{}
	for i := range evs {
		res := s.q(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&evs[i])
		if res.Error != nil {
			return nil, nil, res.Error
		}
		if res.RowsAffected == 0 {
			evs[i].ID = 0
			byDataset[evs[i].DatasetID] = append(byDataset[evs[i].DatasetID], evs[i].EventID)
		} else {
			fresh = append(fresh, evs[i])
		}
	}
	stored := map[[2]any]models.Event{}
	for ds, ids := range byDataset {
		for start := 0; start < len(ids); start += 500 {
			got, err := findShown(withSchedule(s.q(ctx).Model(&models.Event{})).
				Where("events.dataset_id = ? AND events.event_id IN ?", ds, ids[start:min(start+500, len(ids))]), time.Now())
			if err != nil {
				return nil, nil, err
			}
			for _, e := range got {
				stored[[2]any{e.DatasetID, e.EventID}] = e
			}
		}
	}
	all = make([]models.Event, 0, len(evs))
	for _, e := range evs {
		if e.ID == 0 {
			e = stored[[2]any{e.DatasetID, e.EventID}]
		}
		all = append(all, e)
	}
	return all, fresh, nil
}

// moveEvents changes unsent events in both tables, in one transaction:
// "UPDATE unsent_events SET set WHERE where" (args fill both), then upd on
// the events it changed. It returns their ids.
func (s *Store) moveEvents(ctx context.Context, set, where string, args []any, upd map[string]any) ([]int64, error) {
	var ids []int64
	err := s.Tx(ctx, func(tx *Store) error {
		if err := tx.q(ctx).Raw("UPDATE unsent_events SET "+set+" WHERE "+where+" RETURNING event_id", args...).Scan(&ids).Error; err != nil {
			return err
		}
		// A chunk at a time: a list of ids is one bound variable each.
		for start := 0; start < len(ids); start += 500 {
			chunk := ids[start:min(start+500, len(ids))]
			if err := tx.q(ctx).Model(&models.Event{}).Where("id IN ?", chunk).Updates(upd).Error; err != nil {
				return err
			}
		}
		return nil
	})
	return ids, err
}

// CancelLeadEvents fails a lead's unsent events with a reason, when a
// person marks the lead junk. Events being sent are left to their claim.
func (s *Store) CancelLeadEvents(ctx context.Context, accountID, leadID int64, reason string) error {
	now := time.Now().UTC()
	_, err := s.moveEvents(ctx, "status = ?",
		"status = ? AND (lease_until IS NULL OR lease_until <= ?) AND event_id IN (SELECT id FROM events WHERE account_id = ? AND lead_id = ?)",
		[]any{models.EventFailed, models.EventQueued, now, accountID, leadID},
		map[string]any{"status": models.EventFailed, "last_error": reason, "updated_at": now})
	return wrap("cancel lead events", err)
}

// RequeueLeadEvents queues again a lead's events that failed with reason
// (the lead was marked junk, then not junk).
func (s *Store) RequeueLeadEvents(ctx context.Context, accountID, leadID int64, reason string) error {
	now := time.Now().UTC()
	_, err := s.moveEvents(ctx, "status = ?, next_attempt_at = ?, lease_until = NULL",
		"status = ? AND event_id IN (SELECT id FROM events WHERE account_id = ? AND lead_id = ? AND status = ? AND last_error = ?)",
		[]any{models.EventQueued, now, models.EventFailed, accountID, leadID, models.EventFailed, reason},
		map[string]any{"status": models.EventQueued, "last_error": "", "updated_at": now})
	return wrap("requeue lead events", err)
}

// LeadEvents lists a lead's events, in event_time order.
func (s *Store) LeadEvents(ctx context.Context, accountID, leadID int64) ([]models.Event, error) {
	evs, err := findShown(withSchedule(s.q(ctx).Model(&models.Event{})).
		Where("events.account_id = ? AND events.lead_id = ?", accountID, leadID).
		Order("events.event_time, events.id"), time.Now())
	return evs, wrap("lead events", err)
}

// DueDatasets lists the datasets that have events due now and are not
// paused, nor held with their next probe still to come.
func (s *Store) DueDatasets(ctx context.Context, now time.Time) ([]int64, error) {
	now = now.UTC()
	var ids []int64
	err := s.q(ctx).Model(&models.Dataset{}).
		Where("paused_at IS NULL AND (held_since IS NULL OR hold_until <= ?)", now).
		Where(`EXISTS (SELECT 1 FROM unsent_events q WHERE q.dataset_id = datasets.id AND q.status = 'queued'
			AND q.next_attempt_at <= ? AND (q.lease_until IS NULL OR q.lease_until < ?))`, now, now).
		Order("id").Pluck("id", &ids).Error
	return ids, wrap("due datasets", err)
}

// dueSQL picks up to @limit due events of one dataset, in event_time order.
// An event waits while an earlier event of the same lead and dataset is
// still queued and not due itself, so a lead's events reach Meta in order.
// A paused dataset gives nothing, nor a held one but to its probe (@probe):
// another batch of it may have just been refused. "+ 0" keeps the check of
// a lead's earlier events on the lead's index whatever the statistics say:
// with statistics taken while nothing was queued, the dataset-and-status
// index looks cheaper, and reads every earlier queued event of the dataset
// for each candidate. Its blanks: what to select, a fence for the NOT
// EXISTS, and the row locking.
const dueSQL = `
	SELECT %[1]s FROM unsent_events q
	WHERE q.dataset_id = @dataset AND q.status = 'queued'
	  AND q.next_attempt_at <= @now AND (q.lease_until IS NULL OR q.lease_until < @now)
	  AND EXISTS (SELECT 1 FROM datasets d WHERE d.id = @dataset
		AND d.paused_at IS NULL AND (d.held_since IS NULL OR @probe))
	  AND NOT EXISTS (
		SELECT 1 FROM unsent_events p
		WHERE p.lead_id = q.lead_id AND (p.event_time, p.event_id) < (q.event_time, q.event_id)
		  AND p.dataset_id + 0 = q.dataset_id AND p.status = 'queued'
		  AND NOT (p.next_attempt_at <= @now AND (p.lease_until IS NULL OR p.lease_until < @now))
		%[2]s)
	ORDER BY q.event_time, q.event_id
	LIMIT @limit %[3]s`

// claimedCols are what the dispatcher reads of a claimed event (e): the
// attempt it is about to make counts.
const claimedCols = `e.id, e.lead_id, e.origin, e.event_name, e.event_id, e.event_time, e.value, e.currency, e.attempts + 1,
	e.payload, e.payload_stamp`

// On Postgres rows locked by another replica are skipped, so replicas share
// the queue; an expired lease makes an event claimable again, so a crash
// mid-batch loses nothing. OFFSET 0 keeps the NOT EXISTS a lookup in
// unsent_events_lead_idx per candidate: as an anti-join, Postgres would
// read every queued event for the few blocking ones. The lease is set on the rows
// locked, found by ctid (a TID scan), and the one statement returns them.
var claimPostgresSQL = `
WITH due AS (` + sprintf(dueSQL, "q.ctid AS tid", "OFFSET 0", "FOR UPDATE SKIP LOCKED") + `
), claimed AS (
	UPDATE unsent_events SET lease_until = @lease WHERE ctid = ANY(ARRAY(SELECT tid FROM due)) RETURNING event_id
)
SELECT ` + claimedCols + `
FROM claimed c JOIN events e ON e.id = c.event_id`

// SQLite has one writer: the claim sets the lease, then reads the events.
var claimSQLiteSQL = `
WITH due AS (` + sprintf(dueSQL, "q.event_id", "", "") + `)
UPDATE unsent_events SET lease_until = @lease WHERE event_id IN (SELECT event_id FROM due) RETURNING event_id`

// claimLockClass is the first key of the per-dataset claim lock.
const claimLockClass = 0x6c73

// Claim is a batch of events leased to one dispatcher.
type Claim struct {
	// Lease is when the claim runs out. It also tells this claim's rows
	// from those of a later claim, once the lease ran out and another
	// dispatcher took them: settling and releasing leave those alone.
	Lease time.Time
	// Events are in event_time order, with the columns a payload needs
	// and the payload prepared when they were queued.
	Events []models.Event
}

// ClaimEvents leases up to limit due events of a dataset until now+lease,
// and reads them. A held dataset gives events only to its probe, the
// dispatcher that took it (TakeProbe).
//
// A claim changes only the lease of unsent_events rows, a column no index
// reads: on Postgres it is a HOT update of narrow rows.
func (s *Store) ClaimEvents(ctx context.Context, datasetID int64, now time.Time, lease time.Duration, limit int, probe bool) (Claim, error) {
	now = now.UTC()
	// Microseconds, as Postgres keeps it, so the lease compares equal when
	// read back.
	c := Claim{Lease: now.Add(lease).Truncate(time.Microsecond)}
	args := map[string]any{"dataset": datasetID, "now": now, "lease": c.Lease, "limit": limit, "probe": probe}
	err := s.Tx(ctx, func(tx *Store) error {
		var rows *sql.Rows
		var err error
		if tx.dialect == "postgres" {
			// Claims of one dataset take turns: a claim then sees the
			// events the previous one leased, so it cannot take a lead's
			// later event while another replica holds an earlier one.
			if err := tx.q(ctx).Exec("SELECT pg_advisory_xact_lock(CAST(? AS integer), CAST(? AS integer))", claimLockClass, datasetID).Error; err != nil {
				return err
			}
			rows, err = tx.q(ctx).Raw(claimPostgresSQL, args).Rows()
		} else {
			var ids []int64
			if err := tx.q(ctx).Raw(claimSQLiteSQL, args).Scan(&ids).Error; err != nil || len(ids) == 0 {
				return err
			}
			rows, err = tx.q(ctx).Raw("SELECT "+claimedCols+" FROM events e WHERE e.id IN ?", ids).Rows()
		}
		if err != nil {
			return err
		}
		defer rows.Close()
		c.Events = make([]models.Event, 0, limit)
		for rows.Next() {
			e := models.Event{DatasetID: datasetID, Status: models.EventSending, LeaseUntil: &c.Lease}
			if err := rows.Scan(&e.ID, &e.LeadID, &e.Origin, &e.EventName, &e.EventID, &e.EventTime, &e.Value, &e.Currency, &e.Attempts,
				&e.Payload, &e.PayloadStamp); err != nil {
				return err
			}
			c.Events = append(c.Events, e)
		}
		return rows.Err()
	})
	if err != nil {
		return Claim{}, wrap("claim events", err)
	}
	sortEvents(c.Events)
	return c, nil
}

// PayloadLeads reads the leads of an account with the columns an event's
// payload is built from (id, source, partial, junk, event_source_url,
// meta_lead_id, country, state and match_keys), by id: for claimed events
// whose prepared payload is missing or stale. A lead not found is absent.
func (s *Store) PayloadLeads(ctx context.Context, accountID int64, ids []int64) (map[int64]models.Lead, error) {
	out := make(map[int64]models.Lead, len(ids))
	for start := 0; start < len(ids); start += 500 {
		var ls []models.Lead
		err := s.q(ctx).Select("id, source, partial, junk, event_source_url, meta_lead_id, country, state, match_keys").
			Where("account_id = ? AND id IN ?", accountID, ids[start:min(start+500, len(ids))]).Find(&ls).Error
		if err != nil {
			return nil, wrap("payload leads", err)
		}
		for _, l := range ls {
			out[l.ID] = l
		}
	}
	return out, nil
}

// Outcome is what happened to one claimed event.
type Outcome struct {
	ID     int64
	Status models.EventStatus
	Error  string
	// Payload, when set, is the event's JSON as built now, to keep as its
	// payload: one built at send time, or that of an event held back. An
	// event sent with the payload it was queued with leaves it empty.
	Payload string
	// NextAttemptAt is set for a retry.
	NextAttemptAt time.Time
	// Untried puts a queued event back without counting an attempt: it
	// was never sent (its dataset was paused, say).
	Untried bool
}

// SettleEvents records what a send did to the events of claim c, in one
// transaction: sent (with the request and fbtrace id), queued again for a
// retry, failed, expired or dry_run. Each counts as an attempt unless it is
// Untried. Only events still holding c's lease are touched: if it ran out
// and another dispatcher claimed an event, that claim decides.
//
// A sent event leaves unsent_events for event_sends, and its own row is
// left as it is (but for a payload built at send time). The others stay in
// unsent_events with their new status, and on events only unindexed columns
// change.
func (s *Store) SettleEvents(ctx context.Context, c Claim, requestID *int64, fbtraceID string, now time.Time, outs []Outcome) error {
	now = now.UTC()
	if s.dialect == "postgres" && len(outs) > 1 {
		if allSent(outs) {
			return wrap("settle events", s.settleSent(ctx, c, requestID, fbtraceID, now, outs))
		}
		return wrap("settle events", s.settleBulk(ctx, c, requestID, fbtraceID, now, outs))
	}
	attempts := claimedAttempts(c)
	return wrap("settle events", s.Tx(ctx, func(tx *Store) error {
		for _, o := range outs {
			mine := tx.q(ctx).Where("event_id = ? AND lease_until = ?", o.ID, c.Lease)
			if o.Status == models.EventSent {
				res := mine.Delete(&unsentEvent{})
				if res.Error != nil {
					return res.Error
				}
				if res.RowsAffected == 0 {
					continue
				}
				send := eventSend{EventID: o.ID, RequestID: requestID, Attempts: attempts[o.ID], FBTraceID: fbtraceID, SentAt: now}
				if err := tx.q(ctx).Create(&send).Error; err != nil {
					return err
				}
				if o.Payload != "" {
					if err := tx.q(ctx).Model(&models.Event{}).Where("id = ?", o.ID).Update("payload", o.Payload).Error; err != nil {
						return err
					}
				}
				continue
			}
			upd := map[string]any{"status": o.Status, "lease_until": nil}
			if o.Status == models.EventQueued {
				upd["next_attempt_at"] = o.NextAttemptAt.UTC()
			}
			res := mine.Model(&unsentEvent{}).Updates(upd)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 0 {
				continue
			}
			upd = map[string]any{"status": o.Status, "last_error": o.Error, "updated_at": now}
			if !o.Untried {
				upd["attempts"] = gorm.Expr("attempts + 1")
			}
			if o.Payload != "" {
				upd["payload"] = o.Payload
			}
			if o.Status != models.EventQueued && requestID != nil {
				upd["request_id"] = requestID
			}
			if err := tx.q(ctx).Model(&models.Event{}).Where("id = ?", o.ID).Updates(upd).Error; err != nil {
				return err
			}
		}
		return nil
	}))
}

// claimedAttempts maps the events of a claim to the attempt the claim
// makes: what a send records.
func claimedAttempts(c Claim) map[int64]int {
	m := make(map[int64]int, len(c.Events))
	for _, e := range c.Events {
		m[e.ID] = e.Attempts
	}
	return m
}

func allSent(outs []Outcome) bool {
	for _, o := range outs {
		if o.Status != models.EventSent || o.Untried || o.Error != "" || o.Payload != "" {
			return false
		}
	}
	return true
}

// sendsSQL records the sends of the events in gone (a CTE of the event
// ids that left unsent_events) from u (a CTE with each event's id and
// attempt): $1 is when, $2 the trace and $3 the request.
const sendsSQL = `
INSERT INTO event_sends (event_id, request_id, attempts, fbtrace_id, sent_at)
SELECT u.id, $3, u.attempt, $2, $1 FROM u JOIN gone ON gone.event_id = u.id`

// settleSentSQL settles a batch Meta took whole, the common case: the
// events leave unsent_events for event_sends.
const settleSentSQL = `
WITH u AS (
	SELECT * FROM unnest($4::bigint[], $6::integer[]) AS u(id, attempt)
), gone AS (
	DELETE FROM unsent_events WHERE event_id = ANY($4::bigint[]) AND lease_until = $5
	RETURNING event_id
)` + sendsSQL

// settleSent is settleBulk for a batch whose events were all sent: arrays
// of ids and attempts instead of eight columns of outcomes.
func (s *Store) settleSent(ctx context.Context, c Claim, requestID *int64, fbtraceID string, now time.Time, outs []Outcome) error {
	attempts := claimedAttempts(c)
	ids := make([]int64, len(outs))
	tries := make([]int32, len(outs))
	for i, o := range outs {
		ids[i], tries[i] = o.ID, int32(attempts[o.ID])
	}
	_, err := s.conn().ExecContext(ctx, settleSentSQL, now, fbtraceID, requestID, ids, c.Lease, tries)
	return err
}

// settleBulk is SettleEvents in one statement on Postgres: a batch of 1000
// outcomes is one round trip, its columns passed as arrays. The lease goes
// with each row, as a join condition: as a constant, Postgres would
// estimate that hardly any row holds it and drive the join from a scan of
// all unsent events instead of the primary key.
func (s *Store) settleBulk(ctx context.Context, c Claim, requestID *int64, fbtraceID string, now time.Time, outs []Outcome) error {
	attempts := claimedAttempts(c)
	n := len(outs)
	ids, statuses, errs, payloads := make([]int64, n), make([]string, n), make([]string, n), make([]string, n)
	next, leases, tries, attempt := make([]time.Time, n), make([]time.Time, n), make([]int32, n), make([]int32, n)
	for i, o := range outs {
		ids[i], statuses[i], errs[i], payloads[i] = o.ID, string(o.Status), o.Error, o.Payload
		next[i], leases[i], attempt[i] = o.NextAttemptAt.UTC(), c.Lease, int32(attempts[o.ID])
		if !o.Untried {
			tries[i] = 1
		}
	}
	_, err := s.conn().ExecContext(ctx, `
WITH u AS (
	SELECT * FROM unnest($4::bigint[], $5::text[], $6::text[], $7::text[], $8::timestamptz[], $9::timestamptz[], $10::integer[], $11::integer[])
		AS u(id, status, error, payload, next, lease, tries, attempt)
), gone AS (
	DELETE FROM unsent_events q USING u
	WHERE q.event_id = u.id AND q.lease_until = u.lease AND u.status = 'sent'
	RETURNING q.event_id
), sends AS (`+sendsSQL+`
), built AS (
	UPDATE events e SET payload = u.payload
	FROM u JOIN gone ON gone.event_id = u.id
	WHERE e.id = u.id AND u.payload <> ''
), kept AS (
	UPDATE unsent_events q SET
		status = u.status,
		lease_until = NULL,
		next_attempt_at = CASE WHEN u.status = 'queued' THEN u.next ELSE q.next_attempt_at END
	FROM u WHERE q.event_id = u.id AND q.lease_until = u.lease AND u.status <> 'sent'
	RETURNING q.event_id
)
UPDATE events e SET
	status = u.status,
	attempts = e.attempts + u.tries,
	last_error = u.error,
	updated_at = $1,
	payload = CASE WHEN u.payload = '' THEN e.payload ELSE u.payload END,
	request_id = CASE WHEN u.status = 'queued' THEN e.request_id ELSE COALESCE($3, e.request_id) END
FROM u
WHERE e.id = u.id AND e.id IN (SELECT event_id FROM kept)`,
		now, fbtraceID, requestID, ids, statuses, errs, payloads, next, leases, tries, attempt)
	return err
}

// ReleaseEvents hands a claim's events back to the queue at once, when the
// dispatcher stops before sending them.
func (s *Store) ReleaseEvents(ctx context.Context, c Claim) error {
	if len(c.Events) == 0 {
		return nil
	}
	ids := make([]int64, len(c.Events))
	for i, e := range c.Events {
		ids[i] = e.ID
	}
	err := s.q(ctx).Model(&unsentEvent{}).Where("event_id IN ? AND lease_until = ?", ids, c.Lease).
		Update("lease_until", nil).Error
	return wrap("release events", err)
}

// InsertSendRequest logs one request to Meta.
func (s *Store) InsertSendRequest(ctx context.Context, r *models.SendRequest) error {
	return wrap("insert send request", s.q(ctx).Create(r).Error)
}

// QueueDepth counts the events still to send across all accounts, for
// metrics: queued (due, or waiting for a retry) and sending (under a
// lease). It reads only unsent events; how many were sent, failed or
// expired is what the settled counters say.
func (s *Store) QueueDepth(ctx context.Context) (map[models.EventStatus]int64, error) {
	var row struct{ Pending, Sending int64 }
	err := s.q(ctx).Model(&unsentEvent{}).
		Select("COUNT(*) AS pending, COUNT(CASE WHEN lease_until > ? THEN 1 END) AS sending", time.Now().UTC()).
		Where("status = ?", models.EventQueued).Scan(&row).Error
	return map[models.EventStatus]int64{models.EventQueued: row.Pending - row.Sending, models.EventSending: row.Sending}, wrap("queue depth", err)
}
