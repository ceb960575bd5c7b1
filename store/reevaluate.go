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

// StoredEventIDs counts the events of evs, all of dataset datasetID, that
// are stored already (by event id), whatever their state.
func (s *Store) StoredEventIDs(ctx context.Context, datasetID int64, evs []models.Event) (int, error) {
	if len(evs) == 0 {
		return 0, nil
	}
	ids := make([]string, len(evs))
	for i, e := range evs {
		ids[i] = e.EventID
	}
	var n int64
	err := s.q(ctx).Model(&models.Event{}).Where("dataset_id = ? AND event_id IN ?", datasetID, ids).Count(&n).Error
	return int(n), wrap("stored event ids", err)
}
