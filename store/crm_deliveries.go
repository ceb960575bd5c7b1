package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/leadsignal/leadsignal/models"
)

// AddCRMDeliveries stores deliveries in the inbox, due at once, each once:
// one whose connection and key are stored already (a CRM's retry or
// duplicate, in an earlier call or earlier in ds) is left as it is. It
// sets the ids of those it stored, leaves the others' 0, and returns how
// many it stored, in one transaction: on Postgres one statement of arrays
// (newDeliveriesSQL), which keeps its plan and its rows' foreign-key
// checks'; on SQLite statements of up to maxDeliveryRows rows.
func (s *Store) AddCRMDeliveries(ctx context.Context, ds []models.CRMDelivery) (int, error) {
	if len(ds) == 0 {
		return 0, nil
	}
	for i := range ds {
		d := &ds[i]
		d.ID, d.Status = 0, models.DeliveryWaiting
		if d.NextTryAt.IsZero() {
			d.NextTryAt = d.ReceivedAt
		}
	}
	var stored []storedDelivery
	var err error
	switch {
	case s.dialect == "postgres":
		stored, err = s.insertDeliveriesArrays(ctx, ds)
	case len(ds) <= maxDeliveryRows:
		stored, err = s.insertCRMDeliveries(ctx, ds)
	default:
		// Past one statement's bind parameters (SQLite takes 32,766):
		// several statements, one transaction.
		err = s.Tx(ctx, func(tx *Store) error {
			for start := 0; start < len(ds); start += maxDeliveryRows {
				part, err := tx.insertCRMDeliveries(ctx, ds[start:min(start+maxDeliveryRows, len(ds))])
				if err != nil {
					return err
				}
				stored = append(stored, part...)
			}
			return nil
		})
	}
	if pgErr := (*pgconn.PgError)(nil); errors.Is(err, gorm.ErrForeignKeyViolated) || errors.As(err, &pgErr) && pgErr.Code == "23503" {
		return 0, wrap("add crm deliveries", ErrNotFound) // the connection was deleted meanwhile
	}
	if err != nil {
		return 0, wrap("add crm deliveries", err)
	}
	type connKey struct {
		conn int64
		key  string
	}
	ids := make(map[connKey]int64, len(stored))
	for _, r := range stored {
		ids[connKey{r.ConnectionID, r.Key}] = r.ID
	}
	for i := range ds {
		k := connKey{ds[i].ConnectionID, ds[i].Key}
		ds[i].ID = ids[k]
		delete(ids, k) // a duplicate later in ds was not stored
	}
	return len(stored), nil
}

// maxDeliveryRows bounds the deliveries one INSERT stores on SQLite: 10
// bind parameters each.
const maxDeliveryRows = 1000

type storedDelivery struct {
	ID           int64
	ConnectionID int64
	Key          string
}

// insertCRMDeliveries is AddCRMDeliveries's statement for up to
// maxDeliveryRows deliveries on SQLite: the rows it stored.
func (s *Store) insertCRMDeliveries(ctx context.Context, ds []models.CRMDelivery) ([]storedDelivery, error) {
	values := make([]string, len(ds))
	args := make([]any, 0, len(ds)*10)
	for i := range ds {
		d := &ds[i]
		values[i] = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
		args = append(args, d.AccountID, d.ConnectionID, d.Key, d.Body, d.ReceivedAt.UTC(), d.ObjectID, d.CRMStageID,
			d.OccurredAt.UTC(), d.Status, d.NextTryAt.UTC())
	}
	var stored []storedDelivery
	err := s.q(ctx).Raw(`INSERT INTO crm_deliveries (account_id, connection_id, key, body, received_at, object_id, crm_stage_id,
		occurred_at, status, next_try_at) VALUES `+strings.Join(values, ", ")+`
		ON CONFLICT (connection_id, key) DO NOTHING RETURNING id, connection_id, key`, args...).Scan(&stored).Error
	return stored, err
}

// newDeliveryTyped and newDeliveryText are the columns of a new delivery.
var (
	newDeliveryTyped = []column{{"account_id", "bigint"}, {"connection_id", "bigint"}, {"received_at", "timestamptz"},
		{"occurred_at", "timestamptz"}, {"next_try_at", "timestamptz"}}
	newDeliveryText = []textColumn[models.CRMDelivery]{
		{"key", func(d *models.CRMDelivery) string { return d.Key }},
		{"body", func(d *models.CRMDelivery) string { return d.Body }},
		{"object_id", func(d *models.CRMDelivery) string { return d.ObjectID }},
		{"crm_stage_id", func(d *models.CRMDelivery) string { return d.CRMStageID }},
		{"status", func(d *models.CRMDelivery) string { return string(d.Status) }},
	}
	// newDeliveriesSQL stores new deliveries, each (connection, key) once.
	newDeliveriesSQL = unnestInsert("crm_deliveries", newDeliveryTyped, newDeliveryText) +
		" ON CONFLICT (connection_id, key) DO NOTHING RETURNING id, connection_id, key"
)

// insertDeliveriesArrays is AddCRMDeliveries's statement on Postgres.
func (s *Store) insertDeliveriesArrays(ctx context.Context, ds []models.CRMDelivery) ([]storedDelivery, error) {
	n := len(ds)
	account, conn, received, occurred, next := make([]int64, n), make([]int64, n), make([]time.Time, n), make([]time.Time, n),
		make([]time.Time, n)
	for i, d := range ds {
		account[i], conn[i], received[i], occurred[i], next[i] = d.AccountID, d.ConnectionID, d.ReceivedAt.UTC(), d.OccurredAt.UTC(),
			d.NextTryAt.UTC()
	}
	args := textArgs([]any{account, conn, received, occurred, next}, ds, newDeliveryText)
	var stored []storedDelivery
	err := s.pipeline(ctx, true, func(b *pgx.Batch) error {
		b.Queue(newDeliveriesSQL, args...).Query(func(rows pgx.Rows) error {
			var r storedDelivery
			_, err := pgx.ForEachRow(rows, []any{&r.ID, &r.ConnectionID, &r.Key}, func() error {
				stored = append(stored, r)
				return nil
			})
			return err
		})
		return nil
	})
	return stored, err
}

// deliveryLease is how long a claimed delivery is the claimer's: another
// worker takes it again after that (its claimer died).
const deliveryLease = 5 * time.Minute

// ClaimCRMDeliveries takes up to limit waiting deliveries that are due,
// of every account, oldest first, whose lease is free, and leases them
// (one lease, on each of them) so that other workers skip them.
func (s *Store) ClaimCRMDeliveries(ctx context.Context, now time.Time, limit int) ([]models.CRMDelivery, error) {
	now = now.UTC() // SQLite compares times as text
	l := newLease(now, deliveryLease)
	var ds []models.CRMDelivery
	err := s.Tx(ctx, func(tx *Store) error {
		// The status is written out, not bound: a generic plan then
		// still ranges over the due index (partial, on the waiting ones)
		// instead of reading every delivery.
		q := tx.q(ctx).Where("status = '"+string(models.DeliveryWaiting)+"' AND next_try_at <= ? AND "+leaseFreeSQL("", "?"), now, now).
			Order("next_try_at, id").Limit(limit)
		if tx.dialect == "postgres" {
			q = q.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate, Options: clause.LockingOptionsSkipLocked})
		}
		if err := q.Find(&ds).Error; err != nil || len(ds) == 0 {
			return err
		}
		ids := make([]int64, len(ds))
		for i := range ds {
			ids[i] = ds[i].ID
			ds[i].LeaseToken, ds[i].LeaseUntil = &l.Token, &l.Until
		}
		return tx.q(ctx).Model(&models.CRMDelivery{}).Where("id IN ?", ids).
			Updates(map[string]any{"lease_token": l.Token, "lease_until": l.Until}).Error
	})
	return ds, wrap("claim crm deliveries", err)
}

// FinishCRMDeliveries writes what the worker made of claimed deliveries:
// their status, what they wait for and why, their next try, and the lead,
// stage change and stage they came to; their lease ends. Each write is
// fenced by the delivery's lease: one whose lease another worker has taken
// over is left to it, and FinishCRMDeliveries returns ErrLeaseLost once it
// has written the others. On Postgres one statement writes them all.
func (s *Store) FinishCRMDeliveries(ctx context.Context, ds []models.CRMDelivery) error {
	if len(ds) == 0 {
		return nil
	}
	var written int64
	if s.dialect != "postgres" {
		err := s.Tx(ctx, func(tx *Store) error {
			written = 0
			for i := range ds {
				// SQLite compares times as text: all in UTC.
				ds[i].NextTryAt = ds[i].NextTryAt.UTC()
				if ds[i].TriedAt != nil {
					ds[i].TriedAt = ptr(ds[i].TriedAt.UTC())
				}
				token := ds[i].LeaseToken
				ds[i].LeaseToken, ds[i].LeaseUntil = nil, nil
				res := tx.q(ctx).Model(&ds[i]).Where("lease_token = ?", token).Select("status", "waiting_for", "reason", "attempts",
					"next_try_at", "tried_at", "lead_id", "stage_change_id", "stage", "lease_until").Updates(&ds[i])
				if res.Error != nil {
					return res.Error
				}
				written += res.RowsAffected
			}
			return nil
		})
		return wrap("finish crm deliveries", leaseLost(err, written, len(ds)))
	}
	n := len(ds)
	id, token, attempts, next, tried := make([]int64, n), make([]*int64, n), make([]int32, n), make([]time.Time, n), make([]*time.Time, n)
	lead, change, until := make([]*int64, n), make([]*int64, n), make([]*time.Time, n)
	for i, d := range ds {
		id[i], token[i], attempts[i], next[i], tried[i], lead[i], change[i] = d.ID, d.LeaseToken, int32(d.Attempts), d.NextTryAt.UTC(),
			d.TriedAt, d.LeadID, d.StageChangeID
		ds[i].LeaseToken, ds[i].LeaseUntil = nil, nil
	}
	args := textArgs([]any{id, token, attempts, next, tried, lead, change, until}, ds, deliveryText)
	// Its plan and the foreign-key checks of the rows, three each (the
	// lead, the stage change, the connection), are kept: the deliveries
	// are found by id, on their primary key.
	err := s.pipeline(ctx, true, func(b *pgx.Batch) error {
		b.Queue(finishDeliveriesSQL, args...).Exec(func(tag pgconn.CommandTag) error {
			written = tag.RowsAffected()
			return nil
		})
		return nil
	})
	return wrap("finish crm deliveries", leaseLost(err, written, n))
}

// leaseLost is err, or ErrLeaseLost when a batch of n writes fenced by
// their lease wrote fewer.
func leaseLost(err error, written int64, n int) error {
	if err == nil && written < int64(n) {
		return fmt.Errorf("%d of %d taken over: %w", int64(n)-written, n, ErrLeaseLost)
	}
	return err
}

// deliveryTyped are the typed columns FinishCRMDeliveries writes, by id and
// lease_token (its fence); lease_until is written NULL.
var deliveryTyped = []column{
	{"id", "bigint"}, {"lease_token", "bigint"}, {"attempts", "integer"}, {"next_try_at", "timestamptz"}, {"tried_at", "timestamptz"},
	{"lead_id", "bigint"}, {"stage_change_id", "bigint"}, {"lease_until", "timestamptz"},
}

var deliveryText = []textColumn[models.CRMDelivery]{
	{"status", func(d *models.CRMDelivery) string { return string(d.Status) }},
	{"waiting_for", func(d *models.CRMDelivery) string { return d.WaitingFor }},
	{"reason", func(d *models.CRMDelivery) string { return d.Reason }},
	{"stage", func(d *models.CRMDelivery) string { return d.Stage }},
}

// finishDeliveriesSQL writes FinishCRMDeliveries's outcomes at once.
var finishDeliveriesSQL = unnestUpdate("crm_deliveries", deliveryTyped, deliveryText, []string{"id", "lease_token"}, nil)

// CRMDeliveries lists a connection's deliveries newest first, up to limit,
// those before the delivery id before when it is not 0.
func (s *Store) CRMDeliveries(ctx context.Context, accountID, connectionID int64, before int64, limit int) ([]models.CRMDelivery, error) {
	var ds []models.CRMDelivery
	q := s.q(ctx).Where("account_id = ? AND connection_id = ?", accountID, connectionID)
	if before > 0 {
		q = q.Where("id < ?", before)
	}
	err := q.Order("id DESC").Limit(limit).Find(&ds).Error
	return ds, wrap("crm deliveries", err)
}

// CRMDelivery finds one of an account's deliveries.
func (s *Store) CRMDelivery(ctx context.Context, accountID, id int64) (models.CRMDelivery, error) {
	var d models.CRMDelivery
	err := s.q(ctx).Where("account_id = ? AND id = ?", accountID, id).Take(&d).Error
	return d, wrap("crm delivery", err)
}

// RetryCRMDelivery makes one of an account's deliveries waiting and due
// now, whatever became of it: a person's retry.
func (s *Store) RetryCRMDelivery(ctx context.Context, accountID, id int64, now time.Time) error {
	res := s.q(ctx).Model(&models.CRMDelivery{}).Where("account_id = ? AND id = ?", accountID, id).
		Updates(map[string]any{"status": models.DeliveryWaiting, "next_try_at": now.UTC()})
	if res.Error == nil && res.RowsAffected == 0 {
		return wrap("retry crm delivery", ErrNotFound)
	}
	return wrap("retry crm delivery", res.Error)
}

// DeliveryCounts are how many of a connection's deliveries are in each
// status, and when the last came.
type DeliveryCounts struct {
	Waiting, Done, GaveUp int
	Last                  *time.Time
}

// CRMDeliveryCounts counts each of an account's connections' deliveries
// by status.
func (s *Store) CRMDeliveryCounts(ctx context.Context, accountID int64) (map[int64]DeliveryCounts, error) {
	rows, err := s.q(ctx).Model(&models.CRMDelivery{}).Select("connection_id, status, COUNT(*), MAX(received_at)").
		Where("account_id = ?", accountID).Group("connection_id, status").Rows()
	if err != nil {
		return nil, wrap("crm delivery counts", err)
	}
	defer rows.Close()
	out := map[int64]DeliveryCounts{}
	for rows.Next() {
		var (
			id     int64
			status models.DeliveryStatus
			n      int
			// SQLite returns an aggregate's time as text.
			lastValue any
		)
		if err := rows.Scan(&id, &status, &n, &lastValue); err != nil {
			return nil, wrap("crm delivery counts", err)
		}
		last, err := sqliteTime(lastValue)
		if err != nil {
			return nil, wrap("crm delivery counts", err)
		}
		c := out[id]
		switch status {
		case models.DeliveryWaiting:
			c.Waiting = n
		case models.DeliveryDone:
			c.Done = n
		case models.DeliveryGaveUp:
			c.GaveUp = n
		}
		if c.Last == nil || last.After(*c.Last) {
			c.Last = &last
		}
		out[id] = c
	}
	err = rows.Err()
	return out, wrap("crm delivery counts", err)
}

// StuckCRM is one of an account's connections whose deliveries are stuck:
// how many wait for a stage mapping, and how many for a CRM whose API
// failed them several times.
type StuckCRM struct {
	AccountID    int64
	ConnectionID int64
	Name         string
	Kind         string
	Mapping      int
	CRM          int
	// Attention counts the deliveries that cannot become a change as they
	// are (models.WaitingAttention): a person must look.
	Attention int
}

// stuckTries is how many failed tries make a delivery waiting for its CRM
// stuck: one failure is a blip, three (over a few minutes) a problem.
const stuckTries = 3

// StuckCRMConnections lists the accounts' connections with deliveries that
// wait for a stage mapping, for a failing CRM or for a person to look at
// a body that cannot become a change, for their alerts, by account, kind
// and name.
func (s *Store) StuckCRMConnections(ctx context.Context, accountIDs []int64) ([]StuckCRM, error) {
	var out []StuckCRM
	if len(accountIDs) == 0 {
		return nil, nil
	}
	in, list := s.idList("d.account_id", accountIDs)
	err := s.q(ctx).Raw(`SELECT d.account_id, c.id AS connection_id, c.name, c.kind,
			COUNT(*) FILTER (WHERE d.waiting_for = ?) AS mapping,
			COUNT(*) FILTER (WHERE d.waiting_for = ? AND d.attempts >= ?) AS crm,
			COUNT(*) FILTER (WHERE d.waiting_for = ?) AS attention
		FROM crm_deliveries d JOIN crm_connections c ON c.id = d.connection_id
		WHERE `+in+` AND d.status = ? AND d.waiting_for IN (?, ?, ?)
		GROUP BY d.account_id, c.id, c.name, c.kind
		HAVING COUNT(*) FILTER (WHERE d.waiting_for IN (?, ?)) > 0 OR COUNT(*) FILTER (WHERE d.waiting_for = ? AND d.attempts >= ?) > 0
		ORDER BY d.account_id, c.kind, lower(c.name), c.id`,
		models.WaitingMapping, models.WaitingCRM, stuckTries, models.WaitingAttention, list, models.DeliveryWaiting,
		models.WaitingMapping, models.WaitingCRM, models.WaitingAttention,
		models.WaitingMapping, models.WaitingAttention, models.WaitingCRM, stuckTries).Scan(&out).Error
	return out, wrap("stuck crm connections", err)
}

// CRMWaiting counts the deliveries of every account that wait, by what
// they wait for ("" for those not tried yet), for the metrics.
func (s *Store) CRMWaiting(ctx context.Context) (map[string]int, error) {
	var rows []struct {
		WaitingFor string
		N          int
	}
	err := s.q(ctx).Model(&models.CRMDelivery{}).Select("waiting_for, COUNT(*) AS n").
		Where("status = ?", models.DeliveryWaiting).Group("waiting_for").Scan(&rows).Error
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.WaitingFor] = r.N
	}
	return out, wrap("crm waiting", err)
}
