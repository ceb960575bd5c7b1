package store

import (
	"context"
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
}

// shownStatus is an event's status as people see it: a claim leases
// events without changing their status (0004), so a queued event whose
// lease still runs is sending.
func shownStatus(e models.Event, now time.Time) models.EventStatus {
	if e.Status == models.EventQueued && e.LeaseUntil != nil && e.LeaseUntil.After(now) {
		return models.EventSending
	}
	return e.Status
}

// EventCursor is the position after the last event of a page.
type EventCursor struct {
	CreatedAt time.Time
	ID        int64
}

func (s *Store) filterEvents(ctx context.Context, accountID int64, f EventFilter, withStatus bool, now time.Time) *gorm.DB {
	q := s.q(ctx).Model(&models.Event{}).Where("events.account_id = ?", accountID)
	if withStatus && f.Status != "" {
		if f.Status == models.EventSent {
			// Sent is not unsent (every event is one or the other): a
			// probe of the small unsent_events per event, which an index
			// of events can feed without reading the events themselves.
			q = q.Where("NOT EXISTS (SELECT 1 FROM unsent_events u WHERE u.event_id = events.id)")
		} else {
			// Every other status is indexed in unsent_events, per dataset.
			unsent := s.q(ctx).Model(&unsentEvent{}).Select("event_id")
			if f.DatasetID != 0 {
				unsent = unsent.Where("dataset_id = ?", f.DatasetID)
			} else {
				unsent = unsent.Where("dataset_id IN (?)", s.q(ctx).Model(&models.Dataset{}).Select("id").Where("account_id = ?", accountID))
			}
			switch f.Status {
			case models.EventSending:
				unsent = unsent.Where("status = ? AND lease_until > ?", models.EventQueued, now)
			case models.EventQueued:
				unsent = unsent.Where("status = ? AND (lease_until IS NULL OR lease_until <= ?)", models.EventQueued, now)
			default:
				unsent = unsent.Where("status = ?", f.Status)
			}
			q = q.Where("events.id IN (?)", unsent)
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
	return q
}

// Events lists an account's events matching f, newest first.
func (s *Store) Events(ctx context.Context, accountID int64, f EventFilter, after *EventCursor, limit int) ([]models.Event, error) {
	now := time.Now().UTC()
	q := withSchedule(s.filterEvents(ctx, accountID, f, true, now))
	if after != nil {
		q = q.Where("(events.created_at < ? OR (events.created_at = ? AND events.id < ?))", after.CreatedAt.UTC(), after.CreatedAt.UTC(), after.ID)
	}
	evs, err := findShown(q.Order("events.created_at DESC, events.id DESC").Limit(limit), now)
	return evs, wrap("list events", err)
}

// EventCounts counts an account's events matching f (its status aside) per
// status, each count stopping at limit: a page shows "10,000+" rather than
// count a million sent events on every view. Each count but the sent one
// reads the index of unsent_events; sent events are most events.
func (s *Store) EventCounts(ctx context.Context, accountID int64, f EventFilter, limit int) (map[models.EventStatus]int64, error) {
	now := time.Now().UTC()
	out := map[models.EventStatus]int64{}
	for _, st := range models.EventStatuses {
		f.Status = st
		var n int64
		matching := s.filterEvents(ctx, accountID, f, true, now).Select("1").Limit(limit)
		if err := s.q(ctx).Table("(?) AS matching", matching).Count(&n).Error; err != nil {
			return nil, wrap("count events", err)
		}
		if n > 0 {
			out[st] = n
		}
	}
	return out, nil
}

// Event finds one event of an account.
func (s *Store) Event(ctx context.Context, accountID, id int64) (models.Event, error) {
	evs, err := findShown(withSchedule(s.q(ctx).Model(&models.Event{})).
		Where("events.account_id = ? AND events.id = ?", accountID, id).Limit(1), time.Now())
	if err == nil && len(evs) == 0 {
		return models.Event{}, ErrNotFound
	}
	if err != nil {
		return models.Event{}, wrap("event", err)
	}
	return evs[0], nil
}

// RetryEvents queues an account's failed events again now, with a fresh
// count of attempts: all failed ones when ids is empty. It returns how many
// it queued.
func (s *Store) RetryEvents(ctx context.Context, accountID int64, ids []int64, now time.Time) (int64, error) {
	now = now.UTC()
	// A lead a person marked junk stays unsent, whatever a retry says.
	where := "status = ? AND dataset_id IN (SELECT id FROM datasets WHERE account_id = ?) AND lead_id NOT IN (SELECT id FROM leads WHERE account_id = ? AND junk = ?)"
	args := []any{models.EventQueued, now, models.EventFailed, accountID, accountID, true}
	if len(ids) > 0 {
		where += " AND event_id IN ?"
		args = append(args, ids)
	}
	queued, err := s.moveEvents(ctx, "status = ?, next_attempt_at = ?, lease_until = NULL", where, args,
		// Built again when sent: the retry may follow a fix of the lead or
		// the settings.
		map[string]any{"status": models.EventQueued, "attempts": 0, "last_error": "", "payload_stamp": 0, "updated_at": now})
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
			Updates(map[string]any{"paused_at": nil, "paused_reason": "", "throttled_until": nil, "updated_at": now.UTC()})
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
