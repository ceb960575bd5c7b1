package store

import (
	"context"
	"fmt"

	"github.com/leadsignal/leadsignal/models"
)

// The agency overview reads a few things of many accounts at once, one
// query each, whatever the number of accounts, with the account ids as
// one parameter (idList); the reads of hundreds of rows a kind (datasets,
// stages, stage mappings) are scanned by hand (byAccount).

// DatasetsOf lists the datasets of accounts, by account, with the columns
// the agency overview reads of them: what they are (kind, name, mode),
// whether they are paused or held, and since when they exist.
func (s *Store) DatasetsOf(ctx context.Context, accountIDs []int64) (map[int64][]models.Dataset, error) {
	in, list := s.idList("account_id", accountIDs)
	out, err := byAccount(ctx, s, `SELECT id, account_id, kind, name, mode, paused_at, paused_reason, held_since, created_at
		FROM datasets WHERE `+in+` ORDER BY account_id, name, id`, []any{list},
		func(d *models.Dataset) (*int64, []any) {
			return &d.AccountID, []any{&d.ID, &d.AccountID, &d.Kind, &d.Name, &d.Mode, &d.PausedAt, &d.PausedReason, &d.HeldSince, &d.CreatedAt}
		})
	return out, wrap("datasets of accounts", err)
}

// StagesOf lists the stages of accounts in order, by account.
func (s *Store) StagesOf(ctx context.Context, accountIDs []int64) (map[int64][]models.Stage, error) {
	in, list := s.idList("account_id", accountIDs)
	out, err := byAccount(ctx, s, `SELECT id, account_id, name, position, booking, aliases, created_at
		FROM stages WHERE `+in+` ORDER BY account_id, position, id`, []any{list},
		func(st *models.Stage) (*int64, []any) {
			return &st.AccountID, []any{&st.ID, &st.AccountID, &st.Name, &st.Position, &st.Booking, &st.Aliases, &st.CreatedAt}
		})
	return out, wrap("stages of accounts", err)
}

// StageMappingsOf lists the stage mappings of accounts (enabled or not),
// in the accounts' order, by account, with the columns the agency overview
// reads of them (which stage sends which event, enabled or not) and not
// their conditions, values and the rest, which no caller reads.
func (s *Store) StageMappingsOf(ctx context.Context, accountIDs []int64) (map[int64][]models.SendRule, error) {
	in, list := s.idList("account_id", accountIDs)
	out, err := byAccount(ctx, s, `SELECT id, account_id, dataset_id, name, mode, stage, event_name, enabled, position
		FROM send_rules WHERE `+in+` AND mode = ? ORDER BY account_id, position, id`, []any{list, modeStage},
		func(r *models.SendRule) (*int64, []any) {
			return &r.AccountID, []any{&r.ID, &r.AccountID, &r.DatasetID, &r.Name, &r.Mode, &r.Stage, &r.EventName, &r.Enabled, &r.Position}
		})
	return out, wrap("stage mappings of accounts", err)
}

// byAccount runs query q with args (eachRow) and scans each row into a T
// through the targets fields gives (with its account id's), grouping them
// by account. The rows are scanned into one value and kept in one array,
// each account's run of rows (q orders them by account) a slice of it.
func byAccount[T any](ctx context.Context, s *Store, q string, args []any, fields func(*T) (*int64, []any)) (map[int64][]T, error) {
	var (
		v        T
		all      []T
		accounts []int64
	)
	account, dest := fields(&v)
	err := s.eachRow(ctx, q, args, func(row rowScanner) error {
		if err := row.Scan(dest...); err != nil {
			return err
		}
		all, accounts = append(all, v), append(accounts, *account)
		return nil
	})
	out := map[int64][]T{}
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && accounts[j] == accounts[i] {
			j++
		}
		// A second run of an account (q did not order them) is appended
		// to its first, which is capped: the append copies it, never
		// writing over the next run.
		if rows, ok := out[accounts[i]]; ok {
			out[accounts[i]] = append(rows, all[i:j]...)
		} else {
			out[accounts[i]] = all[i:j:j]
		}
		i = j
	}
	return out, err
}

// CRMStagesOf lists, by account, the rows of the accounts' CRM stage
// tables that map a CRM stage to one of their stages, as MappedCRMStages
// does for one.
func (s *Store) CRMStagesOf(ctx context.Context, accountIDs []int64) (map[int64][]models.CRMStage, error) {
	var rows []models.CRMStage
	in, list := s.idList("account_id", accountIDs)
	err := s.q(ctx).Where(in+" AND stage <> ''", list).
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
// a million changes and five labels costs six lookups. %s picks the
// accounts (idList).
const stageLabelsSQL = `WITH RECURSIVE labels (account_id, stage, n) AS (
	SELECT a.id, (SELECT MIN(sc.stage) FROM stage_changes sc WHERE sc.account_id = a.id), 1
	FROM accounts a WHERE %s
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
	in, list := s.idList("a.id", accountIDs)
	err := s.q(ctx).Raw(fmt.Sprintf(stageLabelsSQL, in), list, MaxStageLabels, models.StageJunk, models.StageNotJunk).Scan(&rows).Error
	for _, r := range rows {
		out[r.AccountID] = append(out[r.AccountID], r.Stage)
	}
	return out, wrap("stage labels of accounts", err)
}
