package store

import (
	"time"

	"context"

	"github.com/leadsignal/leadsignal/models"
)

// The agency overview reads a few things of many accounts at once, one
// query each, whatever the number of accounts.

// DatasetsOf lists the datasets of accounts, by account.
func (s *Store) DatasetsOf(ctx context.Context, accountIDs []int64) (map[int64][]models.Dataset, error) {
	var ds []models.Dataset
	err := s.q(ctx).Where("account_id IN ?", accountIDs).Order("account_id, name, id").Find(&ds).Error
	out := map[int64][]models.Dataset{}
	for _, d := range ds {
		out[d.AccountID] = append(out[d.AccountID], d)
	}
	return out, wrap("datasets of accounts", err)
}

// StagesOf lists the stages of accounts in order, by account.
func (s *Store) StagesOf(ctx context.Context, accountIDs []int64) (map[int64][]models.Stage, error) {
	var ss []models.Stage
	err := s.q(ctx).Where("account_id IN ?", accountIDs).Order("account_id, position, id").Find(&ss).Error
	out := map[int64][]models.Stage{}
	for _, st := range ss {
		out[st.AccountID] = append(out[st.AccountID], st)
	}
	return out, wrap("stages of accounts", err)
}

// WithSequences keeps the accounts that have a sequence.
func (s *Store) WithSequences(ctx context.Context, accountIDs []int64) ([]int64, error) {
	var ids []int64
	err := s.q(ctx).Model(&models.Sequence{}).Distinct("account_id").Where("account_id IN ?", accountIDs).
		Order("account_id").Pluck("account_id", &ids).Error
	return ids, wrap("accounts with sequences", err)
}

// FailedSince counts, per account, the events that failed (refused by
// Meta, held back or cancelled) whose event time is since or later,
// whatever their lead's capture time; an account with none is missing.
func (s *Store) FailedSince(ctx context.Context, accountIDs []int64, since time.Time) (map[int64]int64, error) {
	var rows []struct {
		AccountID int64
		N         int64
	}
	err := s.q(ctx).Raw(`SELECT d.account_id, COUNT(*) AS n FROM unsent_events u JOIN datasets d ON d.id = u.dataset_id
		WHERE d.account_id IN ? AND u.status = ? AND u.event_time >= ? GROUP BY d.account_id`,
		accountIDs, models.EventFailed, since.UTC()).Scan(&rows).Error
	out := map[int64]int64{}
	for _, r := range rows {
		out[r.AccountID] = r.N
	}
	return out, wrap("failed since", err)
}
