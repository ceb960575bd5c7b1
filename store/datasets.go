package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/leadsignal/leadsignal/models"
)

// MaxDatasets is the most datasets an account may have. Each automatic
// send rule of each dataset may queue an event for every lead, so the
// count bounds what one lead costs; the Datasets page and the setup file
// refuse more.
const MaxDatasets = 50

// CreateDataset stores a new dataset; ErrConflict when the account
// already has one with this name.
//
// The dataset comes with its default send rule (DefaultRule), named after
// it, or after its id too when a rule has that name already.
func (s *Store) CreateDataset(ctx context.Context, d *models.Dataset) error {
	if d.Kind == "" {
		d.Kind = models.KindMeta
	}
	return wrap("create dataset", s.Tx(ctx, func(tx *Store) error {
		if err := tx.q(ctx).Create(d).Error; err != nil {
			return err
		}
		r := DefaultRule(*d)
		var taken int64
		if err := tx.q(ctx).Model(&models.SendRule{}).Where("account_id = ? AND lower(name) = lower(?)", d.AccountID, r.Name).
			Count(&taken).Error; err != nil {
			return err
		}
		if taken > 0 {
			r.Name = fitName("Completed leads to "+d.Name, fmt.Sprintf(" (dataset %d)", d.ID))
		}
		return tx.CreateSendRule(ctx, &r, nil)
	}))
}

// SaveDataset writes a dataset's settings and secrets. Its pause and
// hold are the dispatcher's (PauseDataset, HoldDataset, LiftHold) and a
// person's new token's (ResumeDataset): an edit made from a page read
// before a pause must not undo it. Its kind stays: its events' ids are
// its platform's.
func (s *Store) SaveDataset(ctx context.Context, d *models.Dataset) error {
	res := s.q(ctx).Where("account_id = ?", d.AccountID).
		Select("name", "pixel_id", "token_sealed", "token_last4", "token_env", "app_secret_sealed", "app_secret_env",
			"test_event_code", "api_version", "mode", "ldu", "event_source", "event_names", "login_account", "client_id",
			"consent", "updated_at").Updates(d)
	if res.Error == nil && res.RowsAffected == 0 {
		return wrap("save dataset", ErrNotFound)
	}
	return wrap("save dataset", res.Error)
}

// Datasets lists an account's datasets by name.
func (s *Store) Datasets(ctx context.Context, accountID int64) ([]models.Dataset, error) {
	var ds []models.Dataset
	err := s.q(ctx).Where("account_id = ?", accountID).Order("lower(name), id").Find(&ds).Error
	return ds, wrap("list datasets", err)
}

// Dataset finds one dataset of an account.
func (s *Store) Dataset(ctx context.Context, accountID, id int64) (models.Dataset, error) {
	var d models.Dataset
	err := s.q(ctx).Where("account_id = ? AND id = ?", accountID, id).Take(&d).Error
	return d, wrap("dataset", err)
}

// DatasetByID finds a dataset for the dispatcher, which works across
// accounts.
func (s *Store) DatasetByID(ctx context.Context, id int64) (models.Dataset, error) {
	var d models.Dataset
	err := s.q(ctx).Take(&d, id).Error
	return d, wrap("dataset by id", err)
}

// PauseDataset stops sending for a dataset whose token Meta refused.
func (s *Store) PauseDataset(ctx context.Context, id int64, reason string, now time.Time) error {
	err := s.q(ctx).Model(&models.Dataset{}).Where("id = ?", id).
		Updates(map[string]any{"paused_at": now.UTC(), "paused_reason": reason, "updated_at": now.UTC()}).Error
	return wrap("pause dataset", err)
}

// HoldDataset records a failed try to reach Meta for a dataset: it holds
// the dataset from now if it was not held yet, counts the try, and sets
// why it failed and when the next probe may go: now plus wait(tries), tries
// counting this one. It returns the dataset as held, and whether this call
// started the hold. probe is the lease of the probe that failed (TakeProbe),
// which it ends, nil for another batch: a probe's write is fenced by its
// lease, ErrLeaseLost when another dispatcher has taken the probe over.
func (s *Store) HoldDataset(ctx context.Context, id int64, now time.Time, reason string, wait func(tries int) time.Duration,
	probe *Lease) (models.Dataset, bool, error) {
	var d models.Dataset
	started := false
	err := s.Tx(ctx, func(tx *Store) error {
		if err := tx.q(ctx).Take(&d, id).Error; err != nil {
			return err
		}
		started = d.HeldSince == nil
		if started {
			d.HeldSince = ptr(now.UTC())
		}
		d.HoldTries++
		d.HoldUntil, d.HoldError = ptr(now.Add(wait(d.HoldTries)).UTC()), reason
		upd := map[string]any{"held_since": d.HeldSince, "hold_until": d.HoldUntil, "hold_tries": d.HoldTries, "hold_error": reason}
		q := tx.q(ctx).Model(&models.Dataset{}).Where("id = ?", id)
		if probe != nil {
			upd["lease_token"], upd["lease_until"] = nil, nil
			d.LeaseToken, d.LeaseUntil = nil, nil
			q = q.Where("lease_token = ?", probe.Token)
		}
		res := q.Updates(upd)
		if res.Error == nil && res.RowsAffected == 0 {
			return ErrLeaseLost
		}
		return res.Error
	})
	return d, started, wrap("hold dataset", err)
}

// TakeProbe gives the caller the one probe of a held dataset whose next
// try is due, unless another dispatcher, on any replica, holds it: it
// leases the dataset's probe until now+lease. The probe claims its batch
// (ClaimEvents) under the same lease, and ends it with HoldDataset,
// LiftHold or ReleaseProbe: a probe that dies frees the dataset and its
// events when the lease runs out. False when the dataset is not held, or
// its probe is not due or already taken.
func (s *Store) TakeProbe(ctx context.Context, id int64, now time.Time, lease time.Duration) (Lease, bool, error) {
	l := newLease(now, lease)
	res := s.q(ctx).Model(&models.Dataset{}).
		Where("id = ? AND held_since IS NOT NULL AND hold_until <= ? AND "+leaseFreeSQL("", "?"), id, now.UTC(), now.UTC()).
		UpdateColumns(map[string]any{"lease_token": l.Token, "lease_until": l.Until})
	return l, res.RowsAffected == 1, wrap("take probe", res.Error)
}

// ReleaseProbe ends a probe that did not try Meta (it found nothing to
// try it with, or failed before): its dataset's next try is due at now.
// ErrLeaseLost when another dispatcher has taken the probe over.
func (s *Store) ReleaseProbe(ctx context.Context, id int64, probe Lease, now time.Time) error {
	res := s.q(ctx).Model(&models.Dataset{}).Where("id = ? AND lease_token = ?", id, probe.Token).
		UpdateColumns(map[string]any{"hold_until": now.UTC(), "lease_token": nil, "lease_until": nil})
	if res.Error == nil && res.RowsAffected == 0 {
		return wrap("release probe", ErrLeaseLost)
	}
	return wrap("release probe", res.Error)
}

// ProbeNow makes a held dataset's next try due at now: a person's "try
// now". A probe under way keeps its lease. held is false when the dataset
// is not held (any more): it sends as usual.
func (s *Store) ProbeNow(ctx context.Context, accountID, id int64, now time.Time) (held bool, err error) {
	res := s.q(ctx).Model(&models.Dataset{}).Where("account_id = ? AND id = ?", accountID, id).
		Where("held_since IS NOT NULL").UpdateColumn("hold_until", now.UTC())
	if res.Error != nil {
		return false, wrap("probe now", res.Error)
	}
	if res.RowsAffected == 0 {
		_, err := s.Dataset(ctx, accountID, id)
		return false, err
	}
	return true, nil
}

// LiftHold ends a dataset's hold after its probe, under lease probe, saw
// Meta take a request, and returns when the hold began; nil when the
// dataset was not held. ErrLeaseLost when another dispatcher has taken the
// probe over.
func (s *Store) LiftHold(ctx context.Context, id int64, probe Lease) (*time.Time, error) {
	var since *time.Time
	err := s.Tx(ctx, func(tx *Store) error {
		var d models.Dataset
		if err := tx.q(ctx).Select("id, held_since").Where("id = ? AND held_since IS NOT NULL", id).Take(&d).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return nil
			}
			return err
		}
		res := tx.q(ctx).Model(&models.Dataset{}).Where("id = ? AND lease_token = ?", id, probe.Token).Updates(map[string]any{
			"held_since": nil, "hold_until": nil, "hold_tries": 0, "hold_error": "", "lease_token": nil, "lease_until": nil,
		})
		if res.Error == nil && res.RowsAffected == 0 {
			return ErrLeaseLost
		}
		since = d.HeldSince
		return res.Error
	})
	return since, wrap("lift hold", err)
}

// StalledDatasets lists an account's datasets that are not sending, paused
// (PausedAt) or held for a Meta outage (HeldSince), with how many events
// wait for each and the oldest of them, which expires first: the account's
// banners, on every page, read them in one query and one per such dataset.
func (s *Store) StalledDatasets(ctx context.Context, accountID int64) ([]DatasetBacklog, error) {
	return s.backlogs(ctx, accountID, "paused_at IS NOT NULL OR held_since IS NOT NULL")
}

func (s *Store) backlogs(ctx context.Context, accountID int64, cond string) ([]DatasetBacklog, error) {
	var ds []models.Dataset
	if err := s.q(ctx).Where("account_id = ? AND ("+cond+")", accountID).Order("name").Find(&ds).Error; err != nil {
		return nil, wrap("dataset backlogs", err)
	}
	out := make([]DatasetBacklog, 0, len(ds))
	for _, d := range ds {
		b := DatasetBacklog{Dataset: d}
		// Events still to send are queued (a running lease only marks them
		// as being sent): the oldest, with how many there are, in one read.
		var oldest []struct {
			EventTime time.Time
			Waiting   int64
		}
		if err := s.q(ctx).Model(&unsentEvent{}).Select("event_time, COUNT(*) OVER () AS waiting").
			Where("dataset_id = ? AND status = ?", d.ID, models.EventQueued).
			Order("event_time, event_id").Limit(1).Scan(&oldest).Error; err != nil {
			return nil, wrap("dataset backlogs", err)
		}
		if len(oldest) == 1 {
			b.Waiting, b.Oldest = oldest[0].Waiting, &oldest[0].EventTime
		}
		out = append(out, b)
	}
	return out, nil
}

// DatasetBacklog is a dataset that is not sending (paused or held), with
// what waits for it, for the account's banners.
type DatasetBacklog struct {
	models.Dataset
	Waiting int64
	// Oldest is the event_time of the oldest waiting event, which expires
	// first; nil when none waits.
	Oldest *time.Time
}

// HoldStats are the holds across all accounts, for /metrics: how many
// datasets are held, and the event_time of the oldest event waiting to be
// sent anywhere (nil when none waits).
func (s *Store) HoldStats(ctx context.Context) (held int64, oldest *time.Time, err error) {
	if err := s.q(ctx).Model(&models.Dataset{}).Where("held_since IS NOT NULL").Count(&held).Error; err != nil {
		return 0, nil, wrap("hold stats", err)
	}
	var times []time.Time
	if err := s.q(ctx).Model(&unsentEvent{}).Where("status = ?", models.EventQueued).
		Order("event_time").Limit(1).Pluck("event_time", &times).Error; err != nil {
		return 0, nil, wrap("hold stats", err)
	}
	if len(times) == 1 {
		oldest = &times[0]
	}
	return held, oldest, nil
}

func ptr[T any](v T) *T { return &v }
