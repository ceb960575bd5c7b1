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

// StageIsNewest reports whether a stage change of the lead at would be
// its newest stage change, and so set its stage (AfterStageChange).
func (s *Store) StageIsNewest(ctx context.Context, accountID, leadID int64, at time.Time) (bool, error) {
	var newer int64
	err := s.q(ctx).Model(&models.StageChange{}).
		Where("account_id = ? AND lead_id = ? AND stage NOT IN (?, ?) AND occurred_at > ?",
			accountID, leadID, models.StageJunk, models.StageNotJunk, at).
		Count(&newer).Error
	return newer == 0, wrap("stage is newest", err)
}

// AfterStageChange is lead l as stage change c leaves it: a junk or
// not_junk marker sets the person's verdict; any other stage becomes the
// lead's stage when it is the newest change (StageIsNewest).
func AfterStageChange(l models.Lead, c models.StageChange, newest bool) models.Lead {
	switch c.Stage {
	case models.StageJunk:
		l.Junk, l.JunkOverride = true, "junk"
	case models.StageNotJunk:
		l.Junk, l.JunkOverride = false, "not_junk"
	default:
		if newest {
			l.Stage = c.Stage
		}
	}
	return l
}

// ChangeLead records stage change c and writes ch, what deciding the
// lead's events from the lead as c leaves it said, in one transaction.
// The decision was made from the lead read with updated_at expect; if the
// lead changed since, nothing is written and ChangeLead returns ErrStale.
// A change recorded already (SameStageChange) writes nothing either:
// ErrSameChange.
// It returns the lead as it is afterwards and how many events were new.
func (s *Store) ChangeLead(ctx context.Context, c *models.StageChange, expect time.Time, ch EventChanges) (models.Lead, int, error) {
	var l models.Lead
	fresh := 0
	err := s.Tx(ctx, func(tx *Store) error {
		var err error
		if l, err = tx.lockLead(ctx, c.AccountID, c.LeadID); err != nil {
			return err
		}
		// Postgres keeps microseconds: a time in hand matches the one
		// stored to within one.
		if d := l.UpdatedAt.Sub(expect); d <= -time.Microsecond || d >= time.Microsecond {
			return ErrStale
		}
		if _, err := tx.sameChange(ctx, c); err == nil {
			return ErrSameChange
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		if l, err = tx.addStageChange(ctx, l, c); err != nil {
			return err
		}
		for i := range ch.Stage {
			ch.Stage[i].StageChangeID = &c.ID
		}
		ch.New = append(ch.New, ch.Stage...)
		fresh, err = tx.applyEventChanges(ctx, l.AccountID, l.ID, ch)
		return err
	})
	if errors.Is(err, ErrStale) || errors.Is(err, ErrSameChange) {
		return l, 0, err
	}
	return l, fresh, wrap("change lead", err)
}

// addStageChange records c on the locked lead l and updates it as
// AfterStageChange says, and drops the prepared payloads of its unsent
// events (they are built again from the lead as it is).
func (s *Store) addStageChange(ctx context.Context, l models.Lead, c *models.StageChange) (models.Lead, error) {
	newest, err := s.StageIsNewest(ctx, c.AccountID, c.LeadID, c.OccurredAt)
	if err != nil {
		return l, err
	}
	if err := s.q(ctx).Create(c).Error; err != nil {
		return l, err
	}
	after := AfterStageChange(l, *c, newest)
	upd := map[string]any{"updated_at": time.Now().UTC(), "junk": after.Junk, "junk_override": after.JunkOverride, "stage": after.Stage}
	if err := s.q(ctx).Model(&models.Lead{}).Where("id = ?", l.ID).Updates(upd).Error; err != nil {
		return l, err
	}
	if err := s.unprepare(ctx, l.ID); err != nil {
		return l, err
	}
	return l, s.q(ctx).Take(&l, l.ID).Error
}

// applyEventChanges writes ch for lead leadID of the account: new events
// queued, cancelled ones queued again, queued ones cancelled. An event
// being sent (under a claim's lease) is left to its claim. It returns how
// many events were new.
func (s *Store) applyEventChanges(ctx context.Context, accountID, leadID int64, ch EventChanges) (int, error) {
	now := time.Now().UTC()
	fresh := 0
	if len(ch.New) > 0 {
		evs := make([]models.Event, len(ch.New))
		for i, e := range ch.New {
			e.ID, e.AccountID, e.LeadID = 0, accountID, leadID
			evs[i] = e
		}
		queue(evs, now)
		_, stored, err := s.insertEvents(ctx, evs)
		if err != nil {
			return 0, err
		}
		if err := s.addUnsent(ctx, stored); err != nil {
			return 0, err
		}
		fresh = len(stored)
	}
	if len(ch.Requeue) > 0 {
		err := s.q(ctx).Model(&unsentEvent{}).
			Where("lead_id = ? AND status = ? AND event_id IN ?", leadID, models.EventFailed, ch.Requeue).
			Updates(map[string]any{"status": models.EventQueued, "last_error": "", "next_attempt_at": now, "lease_until": nil, "updated_at": now}).Error
		if err != nil {
			return 0, err
		}
	}
	for _, c := range ch.Cancel {
		err := s.q(ctx).Model(&unsentEvent{}).
			Where("lead_id = ? AND event_id = ?", leadID, c.ID).Where(sendingSQL("", "?", false), now).
			Updates(map[string]any{"status": models.EventFailed, "last_error": c.Reason, "updated_at": now}).Error
		if err != nil {
			return 0, err
		}
	}
	return fresh, nil
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
