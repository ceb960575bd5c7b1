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

// StageMappingsOf lists the stage mappings of accounts (enabled or not),
// in the accounts' order, by account, with the columns the agency overview
// reads of them (which stage sends which event, enabled or not) and not
// their conditions, values and the rest, which no caller reads.
func (s *Store) StageMappingsOf(ctx context.Context, accountIDs []int64) (map[int64][]models.SendRule, error) {
	var rs []models.SendRule
	err := s.q(ctx).Select("id, account_id, dataset_id, name, mode, stage, event_name, enabled, position").
		Where("account_id IN ? AND mode = ?", accountIDs, modeStage).Order("account_id, position, id").Find(&rs).Error
	out := map[int64][]models.SendRule{}
	for _, r := range rs {
		out[r.AccountID] = append(out[r.AccountID], r)
	}
	return out, wrap("stage mappings of accounts", err)
}

// CRMStagesOf lists, by account, the rows of the accounts' CRM stage
// tables that map a CRM stage to one of their stages, as MappedCRMStages
// does for one.
func (s *Store) CRMStagesOf(ctx context.Context, accountIDs []int64) (map[int64][]models.CRMStage, error) {
	var rows []models.CRMStage
	err := s.q(ctx).Where("account_id IN ? AND stage <> ''", accountIDs).
		Order("account_id, connection_id, position, crm_stage_id").Find(&rows).Error
	out := map[int64][]models.CRMStage{}
	for _, r := range rows {
		out[r.AccountID] = append(out[r.AccountID], r)
	}
	return out, wrap("crm stages of accounts", err)
}

// MaxStageLabels bounds the stage labels StageLabelsOf reads of one
// account: a sender that makes up a label per change cannot make the
// agency overview walk them all.
const MaxStageLabels = 200

// stageLabelsSQL walks the index of stage_changes by account and stage
// (stage_changes_account_stage_idx) from one label to the next, one
// lookup per label, never reading the changes themselves: an account with
// a million changes and five labels costs six lookups.
const stageLabelsSQL = `WITH RECURSIVE labels (account_id, stage, n) AS (
	SELECT a.id, (SELECT MIN(sc.stage) FROM stage_changes sc WHERE sc.account_id = a.id), 1
	FROM accounts a WHERE a.id IN ?
	UNION ALL
	SELECT l.account_id, (SELECT MIN(sc.stage) FROM stage_changes sc WHERE sc.account_id = l.account_id AND sc.stage > l.stage), l.n + 1
	FROM labels l WHERE l.stage IS NOT NULL AND l.n < ?
)
SELECT account_id, stage FROM labels WHERE stage IS NOT NULL AND stage NOT IN (?, ?) ORDER BY account_id, stage`

// StageLabelsOf lists, by account, the stage labels the accounts' stage
// changes were recorded with, as written ("Closed Won", "closedwon"), in
// the database's order of text, at most MaxStageLabels of each; not the
// junk markers.
func (s *Store) StageLabelsOf(ctx context.Context, accountIDs []int64) (map[int64][]string, error) {
	out := map[int64][]string{}
	if len(accountIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		AccountID int64
		Stage     string
	}
	err := s.q(ctx).Raw(stageLabelsSQL, accountIDs, MaxStageLabels, models.StageJunk, models.StageNotJunk).Scan(&rows).Error
	for _, r := range rows {
		out[r.AccountID] = append(out[r.AccountID], r.Stage)
	}
	return out, wrap("stage labels of accounts", err)
}
