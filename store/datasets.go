package store

import (
	"context"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// CreateDataset stores a new dataset; ErrConflict when the account
// already has one with this name.
func (s *Store) CreateDataset(ctx context.Context, d *models.Dataset) error {
	return wrap("create dataset", s.q(ctx).Create(d).Error)
}

// SaveDataset writes a dataset's settings and secrets. Its pause and
// throttle are the dispatcher's (PauseDataset, ThrottleDataset) and a
// person's new token's (ResumeDataset): an edit made from a page read
// before a pause must not undo it.
func (s *Store) SaveDataset(ctx context.Context, d *models.Dataset) error {
	res := s.q(ctx).Where("account_id = ?", d.AccountID).
		Select("name", "pixel_id", "token_sealed", "token_last4", "token_env", "app_secret_sealed", "app_secret_env",
			"test_event_code", "api_version", "mode", "ldu", "updated_at").Updates(d)
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

// ThrottleDataset holds a dataset's sending back until the given time,
// after Meta answered with a rate limit.
func (s *Store) ThrottleDataset(ctx context.Context, id int64, until time.Time) error {
	err := s.q(ctx).Model(&models.Dataset{}).Where("id = ?", id).UpdateColumn("throttled_until", until.UTC()).Error
	return wrap("throttle dataset", err)
}

// PausedDatasets lists an account's paused datasets with how many events
// wait for each and the oldest of them, which expires first.
func (s *Store) PausedDatasets(ctx context.Context, accountID int64) ([]PausedDataset, error) {
	var ds []models.Dataset
	if err := s.q(ctx).Where("account_id = ? AND paused_at IS NOT NULL", accountID).Order("name").Find(&ds).Error; err != nil {
		return nil, wrap("paused datasets", err)
	}
	out := make([]PausedDataset, 0, len(ds))
	for _, d := range ds {
		p := PausedDataset{ID: d.ID, Name: d.Name, PausedReason: d.PausedReason}
		// Events still to send are queued (a running lease only marks them
		// as being sent): the oldest, with how many there are, in one read.
		var oldest []struct {
			EventTime time.Time
			Waiting   int64
		}
		if err := s.q(ctx).Model(&unsentEvent{}).Select("event_time, COUNT(*) OVER () AS waiting").
			Where("dataset_id = ? AND status = ?", d.ID, models.EventQueued).
			Order("event_time, event_id").Limit(1).Scan(&oldest).Error; err != nil {
			return nil, wrap("paused datasets", err)
		}
		if len(oldest) == 1 {
			p.Waiting, p.Oldest = oldest[0].Waiting, &oldest[0].EventTime
		}
		out = append(out, p)
	}
	return out, nil
}

// PausedDataset is one paused dataset for the account banner.
type PausedDataset struct {
	ID           int64
	Name         string
	PausedReason string
	Waiting      int64
	Oldest       *time.Time
}
