package store

import (
	"context"
	"errors"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// EventChanges is what a decision (internal/decide) changes of one lead's
// events.
type EventChanges struct {
	// New are events to queue; one whose (dataset, event id) is stored is
	// left as it is.
	New []models.Event
	// Requeue are failed events, cancelled by an earlier decision, to
	// queue again with their ids.
	Requeue []int64
	// Cancel are queued events to fail with their reasons.
	Cancel []EventCancel
	// Stage are the events of the stage change being recorded, queued
	// like New with the change's id (models.Event.StageChangeID).
	Stage []models.Event
}

// EventCancel is a queued event to cancel, and why.
type EventCancel struct {
	ID     int64
	Reason string
}

// ErrStale means the lead changed after it was read: decide again from
// the lead as it is now.
var ErrStale = errors.New("store: the lead changed meanwhile")

// requeueAndCancel writes what becomes of stored events, on SQLite
// (Postgres: writeCopied): cancelled events queued again, queued ones
// cancelled. An event being sent (under a claim's lease) is left to its
// claim.
func (s *Store) requeueAndCancel(ctx context.Context, requeue []int64, cancel []EventCancel, now time.Time) error {
	if len(requeue) > 0 {
		err := s.q(ctx).Model(&unsentEvent{}).
			Where("status = ? AND event_id IN ?", models.EventFailed, requeue).
			Updates(map[string]any{"status": models.EventQueued, "last_error": "", "next_attempt_at": now, "lease_until": nil, "updated_at": now}).Error
		if err != nil {
			return err
		}
	}
	for _, c := range cancel {
		err := s.q(ctx).Model(&unsentEvent{}).
			Where("event_id = ?", c.ID).Where(sendingSQL("", "?", false), now).
			Updates(map[string]any{"status": models.EventFailed, "last_error": c.Reason, "updated_at": now}).Error
		if err != nil {
			return err
		}
	}
	return nil
}

// StoredEvents counts the events of evs that are stored already (by
// destination and event id), whatever their state: one query for each
// destination among them.
func (s *Store) StoredEvents(ctx context.Context, evs []models.Event) (int, error) {
	ids := map[int64][]string{}
	var order []int64
	for _, e := range evs {
		if _, ok := ids[e.DatasetID]; !ok {
			order = append(order, e.DatasetID)
		}
		ids[e.DatasetID] = append(ids[e.DatasetID], e.EventID)
	}
	total := 0
	for _, d := range order {
		var n int64
		if err := s.q(ctx).Model(&models.Event{}).Where("dataset_id = ? AND event_id IN ?", d, ids[d]).Count(&n).Error; err != nil {
			return total, wrap("stored events", err)
		}
		total += int(n)
	}
	return total, nil
}
