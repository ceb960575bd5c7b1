package store

import (
	"context"
	"database/sql"
	"time"

	"gorm.io/gorm/clause"

	"github.com/leadsignal/leadsignal/models"
)

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
	// A few events (one lead's) go one by one: a skipped row is then known
	// for certain (no row affected), where a multi-row INSERT ... RETURNING
	// would not say which rows it skipped.
	byDataset := map[int64][]string{}
	if len(evs) <= 8 {
		for i := range evs {
			res := s.q(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&evs[i])
			if res.Error != nil {
				return nil, wrap("enqueue events", res.Error)
			}
			if res.RowsAffected == 0 {
				evs[i].ID = 0
				byDataset[evs[i].DatasetID] = append(byDataset[evs[i].DatasetID], evs[i].EventID)
			}
		}
	} else {
		// Batches keep each statement under SQLite's limit of bound variables.
		if err := s.q(ctx).Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(&evs, 500).Error; err != nil {
			return nil, wrap("enqueue events", err)
		}
		for i := range evs {
			evs[i].ID = 0
			byDataset[evs[i].DatasetID] = append(byDataset[evs[i].DatasetID], evs[i].EventID)
		}
	}
	stored := map[[2]any]models.Event{}
	for ds, ids := range byDataset {
		for start := 0; start < len(ids); start += 500 {
			var got []models.Event
			if err := s.q(ctx).Where("dataset_id = ? AND event_id IN ?", ds, ids[start:min(start+500, len(ids))]).Find(&got).Error; err != nil {
				return nil, wrap("enqueue events", err)
			}
			for _, e := range got {
				stored[[2]any{e.DatasetID, e.EventID}] = e
			}
		}
	}
	out := make([]models.Event, 0, len(evs))
	for _, e := range evs {
		if e.ID == 0 {
			e = stored[[2]any{e.DatasetID, e.EventID}]
		}
		out = append(out, e)
	}
	return out, nil
}

// CancelLeadEvents fails a lead's unsent events with a reason, when a
// person marks the lead junk. Events being sent are left to their claim.
func (s *Store) CancelLeadEvents(ctx context.Context, accountID, leadID int64, reason string) error {
	now := time.Now().UTC()
	err := s.q(ctx).Model(&models.Event{}).
		Where("account_id = ? AND lead_id = ? AND status = ? AND (lease_until IS NULL OR lease_until <= ?)", accountID, leadID, models.EventQueued, now).
		Updates(map[string]any{"status": models.EventFailed, "last_error": reason, "updated_at": now}).Error
	return wrap("cancel lead events", err)
}

// RequeueLeadEvents queues again a lead's events that failed with reason
// (the lead was marked junk, then not junk).
func (s *Store) RequeueLeadEvents(ctx context.Context, accountID, leadID int64, reason string) error {
	now := time.Now().UTC()
	err := s.q(ctx).Model(&models.Event{}).
		Where("account_id = ? AND lead_id = ? AND status = ? AND last_error = ?", accountID, leadID, models.EventFailed, reason).
		Updates(map[string]any{"status": models.EventQueued, "last_error": "", "next_attempt_at": now, "updated_at": now}).Error
	return wrap("requeue lead events", err)
}

// LeadEvents lists a lead's events, in event_time order.
func (s *Store) LeadEvents(ctx context.Context, accountID, leadID int64) ([]models.Event, error) {
	var evs []models.Event
	err := s.q(ctx).Where("account_id = ? AND lead_id = ?", accountID, leadID).Order("event_time, id").Find(&evs).Error
	now := time.Now()
	for i := range evs {
		evs[i].Status = shownStatus(evs[i], now)
	}
	return evs, wrap("lead events", err)
}

// DueDatasets lists the datasets that have events due now and are neither
// paused nor throttled.
func (s *Store) DueDatasets(ctx context.Context, now time.Time) ([]int64, error) {
	now = now.UTC()
	var ids []int64
	err := s.q(ctx).Model(&models.Dataset{}).
		Where("paused_at IS NULL AND (throttled_until IS NULL OR throttled_until <= ?)", now).
		Where(`EXISTS (SELECT 1 FROM events e WHERE e.dataset_id = datasets.id AND e.status = 'queued'
			AND e.next_attempt_at <= ? AND (e.lease_until IS NULL OR e.lease_until < ?))`, now, now).
		Order("id").Pluck("id", &ids).Error
	return ids, wrap("due datasets", err)
}

// claimSQL takes up to N due events of one dataset, in event_time order,
// and leases them to the caller. An event waits while an earlier event of
// the same lead and dataset is still pending and not due itself, so a
// lead's events reach Meta in order. A paused or throttled dataset gives
// nothing: another batch of it may have just been refused. On Postgres rows locked by another
// replica are skipped, so replicas share the queue; an expired lease makes
// the event claimable again, so a crash mid-batch loses nothing.
//
// The claim changes no indexed column (status stays queued; a running lease
// means "sending"), so on Postgres it is a HOT update. It returns only what
// the dispatcher reads.
const claimSQL = `
WITH due AS (
	SELECT e.%[1]s FROM events e
	WHERE e.dataset_id = @dataset AND e.status = 'queued'
	  AND e.next_attempt_at <= @now AND (e.lease_until IS NULL OR e.lease_until < @now)
	  AND EXISTS (SELECT 1 FROM datasets d WHERE d.id = @dataset
		AND d.paused_at IS NULL AND (d.throttled_until IS NULL OR d.throttled_until <= @now))
	  AND NOT EXISTS (
		SELECT 1 FROM events p
		WHERE p.dataset_id = e.dataset_id AND p.lead_id = e.lead_id AND p.status = 'queued'
		  AND (p.event_time < e.event_time OR (p.event_time = e.event_time AND p.id < e.id))
		  AND NOT (p.next_attempt_at <= @now AND (p.lease_until IS NULL OR p.lease_until < @now))
		%[2]s)
	ORDER BY e.event_time, e.id
	LIMIT @limit %[3]s
)
UPDATE events SET lease_until = @lease, attempts = attempts + 1, updated_at = @now
WHERE %[4]s
RETURNING id, lead_id, origin, event_name, event_id, event_time, value, currency, attempts`

// claimLockClass is the first key of the per-dataset claim lock.
const claimLockClass = 0x6c73

// Claim is a batch of events leased to one dispatcher.
type Claim struct {
	// Lease is when the claim runs out. It also tells this claim's rows
	// from those of a later claim, once the lease ran out and another
	// dispatcher took them: settling and releasing leave those alone.
	Lease time.Time
	// Events are in event_time order, with the columns a payload needs.
	Events []models.Event
}

// ClaimEvents leases up to limit due events of a dataset until now+lease.
func (s *Store) ClaimEvents(ctx context.Context, datasetID int64, now time.Time, lease time.Duration, limit int) (Claim, error) {
	// SQLite has one writer, and an event's id is its rowid.
	key, fence, lock, match := "id", "", "", "id IN (SELECT id FROM due)"
	if s.dialect == "postgres" {
		// OFFSET 0 keeps the NOT EXISTS a lookup in events_lead_idx per
		// candidate: as an anti-join, Postgres would scan the whole outbox
		// for the few blocking events. The update then finds the rows it
		// locked by ctid (a TID scan), not through the primary key again.
		key, fence, lock, match = "ctid", "OFFSET 0", "FOR UPDATE SKIP LOCKED", "ctid = ANY(ARRAY(SELECT ctid FROM due))"
	}
	now = now.UTC()
	// Microseconds, as Postgres keeps it, so the lease compares equal when
	// read back.
	c := Claim{Lease: now.Add(lease).Truncate(time.Microsecond)}
	err := s.Tx(ctx, func(tx *Store) error {
		if tx.dialect == "postgres" {
			// Claims of one dataset take turns: a claim then sees the
			// events the previous one leased, so it cannot take a lead's
			// later event while another replica holds an earlier one.
			if err := tx.q(ctx).Exec("SELECT pg_advisory_xact_lock(CAST(? AS integer), CAST(? AS integer))", claimLockClass, datasetID).Error; err != nil {
				return err
			}
		}
		rows, err := tx.q(ctx).Raw(sprintf(claimSQL, key, fence, lock, match), map[string]any{
			"dataset": datasetID, "now": now, "lease": c.Lease, "limit": limit,
		}).Rows()
		if err != nil {
			return err
		}
		defer rows.Close()
		c.Events = make([]models.Event, 0, limit)
		for rows.Next() {
			e := models.Event{DatasetID: datasetID, Status: models.EventSending, LeaseUntil: &c.Lease}
			if err := rows.Scan(&e.ID, &e.LeadID, &e.Origin, &e.EventName, &e.EventID, &e.EventTime, &e.Value, &e.Currency, &e.Attempts); err != nil {
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

// Outcome is what happened to one claimed event.
type Outcome struct {
	ID     int64
	Status models.EventStatus
	Error  string
	// Payload is the event's JSON when no request carries it (dry run, held
	// back, given up); a sent event's is in its request's payload.
	Payload string
	// NextAttemptAt is set for a retry.
	NextAttemptAt time.Time
}

// SettleEvents records what a send did to the events of claim c, in one
// transaction: sent (with the request and fbtrace id), queued again for a
// retry, failed, expired or dry_run. Only rows still holding c's lease are
// touched: if it ran out and another dispatcher claimed an event, that
// claim decides.
func (s *Store) SettleEvents(ctx context.Context, c Claim, requestID *int64, fbtraceID string, now time.Time, outs []Outcome) error {
	now = now.UTC()
	if s.dialect == "postgres" && len(outs) > 1 {
		return wrap("settle events", s.settleBulk(ctx, c.Lease, requestID, fbtraceID, now, outs))
	}
	return wrap("settle events", s.Tx(ctx, func(tx *Store) error {
		for _, o := range outs {
			upd := map[string]any{"status": o.Status, "last_error": o.Error, "lease_until": nil, "updated_at": now}
			if o.Payload != "" {
				upd["payload"] = o.Payload
			}
			switch o.Status {
			case models.EventSent:
				// A sent event's JSON is its request's: drop what an
				// earlier, refused attempt kept.
				upd["sent_at"], upd["fbtrace_id"], upd["request_id"], upd["payload"] = now, fbtraceID, requestID, o.Payload
			case models.EventQueued:
				upd["next_attempt_at"] = o.NextAttemptAt.UTC()
			case models.EventFailed, models.EventExpired, models.EventDryRun:
				if requestID != nil {
					upd["request_id"] = requestID
				}
			}
			if err := tx.q(ctx).Model(&models.Event{}).Where("id = ? AND lease_until = ?", o.ID, c.Lease).Updates(upd).Error; err != nil {
				return err
			}
		}
		return nil
	}))
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
	err := s.q(ctx).Model(&models.Event{}).Where("id IN ? AND lease_until = ?", ids, c.Lease).
		Updates(map[string]any{"lease_until": nil, "attempts": clause.Expr{SQL: "attempts - 1"}}).Error
	return wrap("release events", err)
}

// InsertSendRequest logs one request to Meta.
func (s *Store) InsertSendRequest(ctx context.Context, r *models.SendRequest) error {
	return wrap("insert send request", s.q(ctx).Create(r).Error)
}

// LeadsByIDs loads the leads of a batch, keyed by id, with the columns a
// payload is built from: id, source, partial, junk, event_source_url,
// meta_lead_id, country, state and match_keys.
func (s *Store) LeadsByIDs(ctx context.Context, accountID int64, ids []int64) (map[int64]models.Lead, error) {
	const cols = "id, source, partial, junk, event_source_url, meta_lead_id, country, state, match_keys"
	var (
		rows *sql.Rows
		err  error
	)
	if s.dialect == "postgres" {
		// One array parameter: a plan Postgres can reuse, whatever the count.
		rows, err = s.conn().QueryContext(ctx, "SELECT "+cols+" FROM leads WHERE account_id = $1 AND id = ANY($2)", accountID, ids)
	} else {
		rows, err = s.q(ctx).Model(&models.Lead{}).Select(cols).Where("account_id = ? AND id IN ?", accountID, ids).Rows()
	}
	if err != nil {
		return nil, wrap("leads by ids", err)
	}
	defer rows.Close()
	out := make(map[int64]models.Lead, len(ids))
	for rows.Next() {
		var l models.Lead
		if err := rows.Scan(&l.ID, &l.Source, &l.Partial, &l.Junk, &l.EventSourceURL, &l.MetaLeadID, &l.Country, &l.State, &l.MatchKeys); err != nil {
			return nil, wrap("leads by ids", err)
		}
		out[l.ID] = l
	}
	return out, wrap("leads by ids", rows.Err())
}

// QueueDepth counts the events still to send across all accounts, for
// metrics: queued (due, or waiting for a retry) and sending (under a
// lease). It reads only pending rows, through the claim's partial index;
// how many were sent, failed or expired is what the settled counters say.
func (s *Store) QueueDepth(ctx context.Context) (map[models.EventStatus]int64, error) {
	var row struct{ Pending, Sending int64 }
	err := s.q(ctx).Model(&models.Event{}).
		Select("COUNT(*) AS pending, COUNT(CASE WHEN lease_until > ? THEN 1 END) AS sending", time.Now().UTC()).
		Where("status = ?", models.EventQueued).Scan(&row).Error
	return map[models.EventStatus]int64{models.EventQueued: row.Pending - row.Sending, models.EventSending: row.Sending}, wrap("queue depth", err)
}

// settleBulk is SettleEvents in one statement on Postgres: a batch of 1000
// outcomes is one round trip, its columns passed as arrays. The lease goes
// with each row, as a join condition: as a constant, Postgres would
// estimate that hardly any row holds it and drive the join from a scan of
// the whole outbox instead of the primary key.
func (s *Store) settleBulk(ctx context.Context, lease time.Time, requestID *int64, fbtraceID string, now time.Time, outs []Outcome) error {
	ids := make([]int64, len(outs))
	statuses := make([]string, len(outs))
	errs := make([]string, len(outs))
	payloads := make([]string, len(outs))
	next := make([]time.Time, len(outs))
	leases := make([]time.Time, len(outs))
	for i, o := range outs {
		ids[i], statuses[i], errs[i], payloads[i] = o.ID, string(o.Status), o.Error, o.Payload
		next[i], leases[i] = o.NextAttemptAt.UTC(), lease
	}
	_, err := s.conn().ExecContext(ctx, `
UPDATE events e SET
	status = u.status,
	last_error = u.error,
	lease_until = NULL,
	updated_at = $1,
	payload = CASE WHEN u.payload = '' AND u.status <> 'sent' THEN e.payload ELSE u.payload END,
	next_attempt_at = CASE WHEN u.status = 'queued' THEN u.next ELSE e.next_attempt_at END,
	sent_at = CASE WHEN u.status = 'sent' THEN $1 ELSE e.sent_at END,
	fbtrace_id = CASE WHEN u.status = 'sent' THEN $2 ELSE e.fbtrace_id END,
	request_id = CASE WHEN u.status = 'queued' THEN e.request_id ELSE COALESCE($3, e.request_id) END
FROM unnest($4::bigint[], $5::text[], $6::text[], $7::text[], $8::timestamptz[], $9::timestamptz[])
	AS u(id, status, error, payload, next, lease)
WHERE e.id = u.id AND e.lease_until = u.lease`, now, fbtraceID, requestID, ids, statuses, errs, payloads, next, leases)
	return err
}
