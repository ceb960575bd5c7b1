package store

import (
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
