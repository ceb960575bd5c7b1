package store

import (
	"context"
	"encoding/json"
	"time"

	"gorm.io/gorm/clause"

	"github.com/leadsignal/leadsignal/models"
)

// pendingStatuses are the statuses of events not yet settled.
var pendingStatuses = []models.EventStatus{models.EventQueued, models.EventSending}

// EnqueueEvents inserts events into the outbox. An event whose
// (dataset_id, event_id) is already there is left as it is: a resent form,
// a retried webhook or a replayed sync can never queue a second copy. It
// returns every given event as stored, new or old.
func (s *Store) EnqueueEvents(ctx context.Context, evs []models.Event) ([]models.Event, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	now := time.Now().UTC()
	for i := range evs {
		evs[i].ID = 0
		if evs[i].Status == "" {
			evs[i].Status = models.EventQueued
		}
		if evs[i].NextAttemptAt.IsZero() {
			evs[i].NextAttemptAt = now
		}
	}
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
// person marks the lead junk.
func (s *Store) CancelLeadEvents(ctx context.Context, accountID, leadID int64, reason string) error {
	err := s.q(ctx).Model(&models.Event{}).
		Where("account_id = ? AND lead_id = ? AND status = ?", accountID, leadID, models.EventQueued).
		Updates(map[string]any{"status": models.EventFailed, "last_error": reason, "updated_at": time.Now().UTC()}).Error
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
	return evs, wrap("lead events", err)
}

// DueDatasets lists the datasets that have events due now and are neither
// paused nor throttled.
func (s *Store) DueDatasets(ctx context.Context, now time.Time) ([]int64, error) {
	now = now.UTC()
	var ids []int64
	err := s.q(ctx).Model(&models.Dataset{}).
		Where("paused_at IS NULL AND (throttled_until IS NULL OR throttled_until <= ?)", now).
		Where(`EXISTS (SELECT 1 FROM events e WHERE e.dataset_id = datasets.id AND e.status IN ('queued', 'sending')
			AND e.next_attempt_at <= ? AND (e.status = 'queued' OR e.lease_until < ?))`, now, now).
		Order("id").Pluck("id", &ids).Error
	return ids, wrap("due datasets", err)
}

// claimSQL takes up to N due events of one dataset, in event_time order,
// and leases them to the caller. An event waits while an earlier event of
// the same lead and dataset is still pending and not due itself, so a
// lead's events reach Meta in order. On Postgres rows locked by another
// replica are skipped, so replicas share the queue; an expired lease makes
// the event claimable again, so a crash mid-batch loses nothing.
const claimSQL = `
WITH due AS (
	SELECT e.id FROM events e
	WHERE e.dataset_id = @dataset AND e.status IN ('queued', 'sending')
	  AND e.next_attempt_at <= @now AND (e.status = 'queued' OR e.lease_until < @now)
	  AND NOT EXISTS (
		SELECT 1 FROM events p
		WHERE p.dataset_id = e.dataset_id AND p.lead_id = e.lead_id AND p.status IN ('queued', 'sending')
		  AND (p.event_time < e.event_time OR (p.event_time = e.event_time AND p.id < e.id))
		  AND NOT (p.next_attempt_at <= @now AND (p.status = 'queued' OR p.lease_until < @now)))
	ORDER BY e.event_time, e.id
	LIMIT @limit %s
)
UPDATE events SET status = 'sending', lease_until = @lease, attempts = attempts + 1, updated_at = @now
WHERE id IN (SELECT id FROM due)
RETURNING *`

// claimLockClass is the first key of the per-dataset claim lock.
const claimLockClass = 0x6c73

// ClaimEvents leases up to limit due events of a dataset until now+lease.
func (s *Store) ClaimEvents(ctx context.Context, datasetID int64, now time.Time, lease time.Duration, limit int) ([]models.Event, error) {
	lock := ""
	if s.dialect == "postgres" {
		lock = "FOR UPDATE SKIP LOCKED"
	}
	now = now.UTC()
	var evs []models.Event
	err := s.Tx(ctx, func(tx *Store) error {
		if tx.dialect == "postgres" {
			// Claims of one dataset take turns: a claim then sees the
			// events the previous one took as sending, so it cannot take a
			// lead's later event while another replica holds an earlier one.
			if err := tx.q(ctx).Exec("SELECT pg_advisory_xact_lock(CAST(? AS integer), CAST(? AS integer))", claimLockClass, datasetID).Error; err != nil {
				return err
			}
		}
		return tx.q(ctx).Raw(sprintf(claimSQL, lock), map[string]any{
			"dataset": datasetID, "now": now, "lease": now.Add(lease), "limit": limit,
		}).Scan(&evs).Error
	})
	if err != nil {
		return nil, wrap("claim events", err)
	}
	sortEvents(evs)
	return evs, nil
}

// Outcome is what happened to one claimed event.
type Outcome struct {
	ID      int64
	Status  models.EventStatus
	Error   string
	Payload string
	// NextAttemptAt is set for a retry.
	NextAttemptAt time.Time
}

// SettleEvents records what a send did to claimed events, in one
// transaction: sent (with the request and fbtrace id), queued again for a
// retry, failed, expired or dry_run.
func (s *Store) SettleEvents(ctx context.Context, requestID *int64, fbtraceID string, now time.Time, outs []Outcome) error {
	now = now.UTC()
	if s.dialect == "postgres" && len(outs) > 1 {
		return wrap("settle events", s.settleBulk(ctx, requestID, fbtraceID, now, outs))
	}
	return wrap("settle events", s.Tx(ctx, func(tx *Store) error {
		for _, o := range outs {
			upd := map[string]any{"status": o.Status, "last_error": o.Error, "lease_until": nil, "updated_at": now}
			if o.Payload != "" {
				upd["payload"] = o.Payload
			}
			switch o.Status {
			case models.EventSent:
				upd["sent_at"], upd["fbtrace_id"], upd["request_id"] = now, fbtraceID, requestID
			case models.EventQueued:
				upd["next_attempt_at"] = o.NextAttemptAt.UTC()
			case models.EventFailed, models.EventExpired, models.EventDryRun:
				if requestID != nil {
					upd["request_id"] = requestID
				}
			}
			// Only a row still being sent: if this dispatcher's lease ran
			// out and another claimed the event, that claim decides.
			if err := tx.q(ctx).Model(&models.Event{}).Where("id = ? AND status = ?", o.ID, models.EventSending).Updates(upd).Error; err != nil {
				return err
			}
		}
		return nil
	}))
}

// ReleaseEvents hands claimed events back to the queue at once, when the
// dispatcher stops before sending them.
func (s *Store) ReleaseEvents(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	err := s.q(ctx).Model(&models.Event{}).Where("id IN ? AND status = ?", ids, models.EventSending).
		Updates(map[string]any{"status": models.EventQueued, "lease_until": nil, "attempts": clause.Expr{SQL: "attempts - 1"}}).Error
	return wrap("release events", err)
}

// InsertSendRequest logs one request to Meta.
func (s *Store) InsertSendRequest(ctx context.Context, r *models.SendRequest) error {
	return wrap("insert send request", s.q(ctx).Create(r).Error)
}

// LeadsByIDs loads the leads of a batch, keyed by id.
func (s *Store) LeadsByIDs(ctx context.Context, ids []int64) (map[int64]models.Lead, error) {
	var ls []models.Lead
	if err := s.q(ctx).Where("id IN ?", ids).Find(&ls).Error; err != nil {
		return nil, wrap("leads by ids", err)
	}
	out := make(map[int64]models.Lead, len(ls))
	for _, l := range ls {
		out[l.ID] = l
	}
	return out, nil
}

// QueueDepth counts events per status across all accounts, for metrics.
func (s *Store) QueueDepth(ctx context.Context) (map[models.EventStatus]int64, error) {
	var rows []struct {
		Status models.EventStatus
		N      int64
	}
	err := s.q(ctx).Model(&models.Event{}).Select("status, COUNT(*) AS n").Group("status").Scan(&rows).Error
	out := map[models.EventStatus]int64{}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, wrap("queue depth", err)
}

// settleBulk is SettleEvents in one statement on Postgres: a batch of 1000
// outcomes is one round trip instead of a thousand.
func (s *Store) settleBulk(ctx context.Context, requestID *int64, fbtraceID string, now time.Time, outs []Outcome) error {
	type row struct {
		ID      int64              `json:"id"`
		Status  models.EventStatus `json:"status"`
		Error   string             `json:"error"`
		Payload *string            `json:"payload"`
		Next    *time.Time         `json:"next"`
	}
	rows := make([]row, len(outs))
	for i, o := range outs {
		r := row{ID: o.ID, Status: o.Status, Error: o.Error}
		if o.Payload != "" {
			r.Payload = &outs[i].Payload
		}
		if o.Status == models.EventQueued {
			t := o.NextAttemptAt.UTC()
			r.Next = &t
		}
		rows[i] = r
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	return s.q(ctx).Exec(`
UPDATE events e SET
	status = u.status,
	last_error = u.error,
	lease_until = NULL,
	updated_at = @now,
	payload = COALESCE(u.payload, e.payload),
	next_attempt_at = COALESCE(u.next, e.next_attempt_at),
	sent_at = CASE WHEN u.status = 'sent' THEN @now ELSE e.sent_at END,
	fbtrace_id = CASE WHEN u.status = 'sent' THEN @trace ELSE e.fbtrace_id END,
	request_id = CASE WHEN u.status = 'queued' THEN e.request_id ELSE COALESCE(CAST(@req AS bigint), e.request_id) END
FROM json_to_recordset(CAST(@rows AS json)) AS u(id bigint, status text, error text, payload text, next timestamptz)
WHERE e.id = u.id AND e.status = 'sending'`, map[string]any{"now": now, "trace": fbtraceID, "req": requestID, "rows": string(b)}).Error
}
