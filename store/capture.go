package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/leadsignal/leadsignal/models"
)

// A batch of captures talks to the database twice: once to learn what it
// needs and reserve its leads' ids (LookupCapture), once to write what the
// capture decided (SaveCaptured). On Postgres each is one round trip: the
// statements go out together in a pipeline.

// CaptureQuery asks what a batch of captures needs to know of one account.
type CaptureQuery struct {
	AccountID int64
	// ExternalIDs are the batch's external ids in this account.
	ExternalIDs []string
	// EmailHashes and PhoneHashes are looked up among the account's
	// complete leads captured since Since, for the duplicate signal.
	EmailHashes, PhoneHashes []string
	Since                    time.Time
}

// ExistingLead is a lead found by its external id, with what a completed
// partial lead keeps of it.
type ExistingLead struct {
	ID           int64
	Partial      bool
	ReceivedAt   time.Time
	Stage        string
	JunkOverride string
}

// Contact is when a complete lead with these hashes was captured.
type Contact struct {
	EmailHash string
	PhoneHash string
	CreatedAt time.Time
}

// CaptureFacts is what the store knows of one account for a batch.
type CaptureFacts struct {
	// Existing maps the external ids already taken to their leads.
	Existing map[string]ExistingLead
	// Contacts are the recent complete leads with one of the hashes.
	Contacts []Contact
	// Datasets are the account's datasets (id, name, pixel id and LDU).
	Datasets []models.Dataset
	// Rules are the account's enabled send rules that a capture consults,
	// in their order.
	Rules []models.SendRule
}

// captureRulesSQL selects an account's ($1) enabled send rules that a
// capture consults, with the columns ruleArgs scans. SQLite reads "$1" as
// its first parameter too.
const captureRulesSQL = `SELECT id, dataset_id, also_dataset_ids, name, mode, event_name, action_source, value, value_field, currency,
	currency_field, test_event_code, combinator, conditions, updated_at
FROM send_rules WHERE account_id = $1 AND enabled
	AND mode IN ('automatic_completed', 'automatic_partial', 'automatic_match')
ORDER BY position, id`

// ruleArgs are the scan targets of captureRulesSQL's columns.
func ruleArgs(r *models.SendRule) []any {
	return []any{&r.ID, &r.DatasetID, &r.AlsoDatasetIDs, &r.Name, &r.Mode, &r.EventName, &r.ActionSource, &r.Value, &r.ValueField, &r.Currency,
		&r.CurrencyField, &r.TestEventCode, &r.Combinator, &r.Conditions, &r.UpdatedAt}
}

// LookupCapture answers the queries, by account id, and reserves reserve
// lead ids for the batch's new leads (unused ones are simply skipped): a
// lead's events are made, with its id, before it is written.
func (s *Store) LookupCapture(ctx context.Context, qs []CaptureQuery, reserve int) (map[int64]*CaptureFacts, []int64, error) {
	out := make(map[int64]*CaptureFacts, len(qs))
	for _, q := range qs {
		out[q.AccountID] = &CaptureFacts{Existing: map[string]ExistingLead{}}
	}
	var ids []int64
	var err error
	if s.dialect == "postgres" {
		ids, err = s.lookupPipelined(ctx, qs, reserve, out)
	} else {
		for _, q := range qs {
			if err = s.lookupOne(ctx, q, out[q.AccountID]); err != nil {
				break
			}
		}
		if err == nil && reserve > 0 {
			ids, err = s.reserveSQLite(ctx, "leads", reserve)
		}
	}
	if err != nil {
		return nil, nil, wrap("capture lookup", err)
	}
	// The window is applied to the rows found, not in the queries: a
	// generic plan would otherwise scan the account's leads by date.
	for _, q := range qs {
		f := out[q.AccountID]
		recent := f.Contacts[:0]
		for _, c := range f.Contacts {
			if !c.CreatedAt.Before(q.Since) {
				recent = append(recent, c)
			}
		}
		f.Contacts = recent
	}
	return out, ids, nil
}

// recentContactsSQL finds the complete leads of account $2 with one of the
// email hashes $1 or phone hashes $3: one index lookup per hash, in
// subqueries the planner may not turn into joins (OFFSET 0), so that the
// plan the lookup keeps (keptPlansSQL) reads the hash's index whatever the
// statistics it was made with: as a join, a plan made before the table had
// statistics would read the account's leads for every hash.
// "email_hash = ANY(array)" would let a plan settle for the account's own
// index. Each subquery is in its index's order (created_at, after the
// account and the hash): on a table analyzed while empty every index of
// the account costs the same, and a plan made then read the phone index
// for an email hash, every lead of the account, until the next ANALYZE.
const recentContactsSQL = `
SELECT l.email_hash, l.phone_hash, l.created_at FROM unnest(CAST($1 AS text[])) AS h(hash)
CROSS JOIN LATERAL (SELECT email_hash, phone_hash, created_at FROM leads
	WHERE account_id = $2 AND email_hash = h.hash AND NOT partial ORDER BY created_at OFFSET 0) l
UNION ALL
SELECT l.email_hash, l.phone_hash, l.created_at FROM unnest(CAST($3 AS text[])) AS h(hash)
CROSS JOIN LATERAL (SELECT email_hash, phone_hash, created_at FROM leads
	WHERE account_id = $2 AND phone_hash = h.hash AND NOT partial ORDER BY created_at OFFSET 0) l`

// existingLeadsSQL finds the leads of account $2 with the external ids $1:
// one index lookup per id, in a subquery the planner may not turn into a
// join (OFFSET 0).
const existingLeadsSQL = `SELECT l.external_id, l.id, l.partial, l.received_at, l.stage, l.junk_override
FROM unnest(CAST($1 AS text[])) AS x(id)
CROSS JOIN LATERAL (SELECT external_id, id, partial, received_at, stage, junk_override FROM leads
	WHERE account_id = $2 AND external_id = x.id OFFSET 0) l`

// lookupPipelined is LookupCapture on Postgres: every query of the batch,
// and the reservation, in one round trip. Its plans are kept: a batch's
// captures wait for its lookups, and planning them cost more than running
// them.
func (s *Store) lookupPipelined(ctx context.Context, qs []CaptureQuery, reserve int, out map[int64]*CaptureFacts) ([]int64, error) {
	var ids []int64
	err := s.pipeline(ctx, true, func(b *pgx.Batch) error {
		for _, q := range qs {
			f := out[q.AccountID]
			if len(q.ExternalIDs) > 0 {
				b.Queue(existingLeadsSQL, q.ExternalIDs, q.AccountID).
					Query(func(rows pgx.Rows) error {
						var ext string
						var l ExistingLead
						_, err := pgx.ForEachRow(rows, []any{&ext, &l.ID, &l.Partial, &l.ReceivedAt, &l.Stage, &l.JunkOverride},
							func() error { f.Existing[ext] = l; return nil })
						return err
					})
			}
			if len(q.EmailHashes)+len(q.PhoneHashes) > 0 {
				b.Queue(recentContactsSQL, q.EmailHashes, q.AccountID, q.PhoneHashes).
					Query(func(rows pgx.Rows) error {
						var c Contact
						_, err := pgx.ForEachRow(rows, []any{&c.EmailHash, &c.PhoneHash, &c.CreatedAt}, func() error {
							f.Contacts = append(f.Contacts, c)
							return nil
						})
						return err
					})
			}
			b.Queue(`SELECT id, kind, name, pixel_id, ldu, event_names FROM datasets WHERE account_id = $1 ORDER BY lower(name), id`, q.AccountID).
				Query(func(rows pgx.Rows) error {
					var d models.Dataset
					_, err := pgx.ForEachRow(rows, []any{&d.ID, &d.Kind, &d.Name, &d.PixelID, &d.LDU, &d.EventNames}, func() error {
						d.AccountID = q.AccountID
						f.Datasets = append(f.Datasets, d)
						return nil
					})
					return err
				})
		}
		for _, q := range qs {
			f := out[q.AccountID]
			b.Queue(captureRulesSQL, q.AccountID).Query(func(rows pgx.Rows) error {
				var r models.SendRule
				_, err := pgx.ForEachRow(rows, ruleArgs(&r), func() error {
					r.AccountID, r.Enabled = q.AccountID, true
					f.Rules = append(f.Rules, r)
					return nil
				})
				return err
			})
		}
		if reserve > 0 {
			b.Queue(`SELECT nextval('leads_id_seq') FROM generate_series(1, $1)`, reserve).
				Query(func(rows pgx.Rows) error {
					var id int64
					_, err := pgx.ForEachRow(rows, []any{&id}, func() error { ids = append(ids, id); return nil })
					return err
				})
		}
		return nil
	})
	return ids, err
}

// lookupOne is LookupCapture for one account, query by query.
func (s *Store) lookupOne(ctx context.Context, q CaptureQuery, f *CaptureFacts) error {
	if len(q.ExternalIDs) > 0 {
		var found []models.Lead
		if err := s.q(ctx).Select("external_id, id, partial, received_at, stage, junk_override").
			Where("account_id = ? AND external_id IN ?", q.AccountID, q.ExternalIDs).Find(&found).Error; err != nil {
			return err
		}
		for _, l := range found {
			f.Existing[*l.ExternalID] = ExistingLead{ID: l.ID, Partial: l.Partial, ReceivedAt: l.ReceivedAt, Stage: l.Stage, JunkOverride: l.JunkOverride}
		}
	}
	if len(q.EmailHashes)+len(q.PhoneHashes) > 0 {
		if err := s.q(ctx).Raw(`
SELECT email_hash, phone_hash, created_at FROM leads
WHERE account_id = ? AND email_hash IN ? AND partial = ?
UNION ALL
SELECT email_hash, phone_hash, created_at FROM leads
WHERE account_id = ? AND phone_hash IN ? AND partial = ?`,
			q.AccountID, orNone(q.EmailHashes), false, q.AccountID, orNone(q.PhoneHashes), false).Scan(&f.Contacts).Error; err != nil {
			return err
		}
	}
	var err error
	if f.Datasets, err = s.Datasets(ctx, q.AccountID); err != nil {
		return err
	}
	rows, err := s.conn().QueryContext(ctx, captureRulesSQL, q.AccountID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		r := models.SendRule{AccountID: q.AccountID, Enabled: true}
		if err := rows.Scan(ruleArgs(&r)...); err != nil {
			return err
		}
		f.Rules = append(f.Rules, r)
	}
	return rows.Err()
}

// orNone is vs, or a list whose one value is never a hash: an empty list
// would be "IN (NULL)", harmless but obscure.
func orNone(vs []string) []string {
	if len(vs) == 0 {
		return []string{"x"}
	}
	return vs
}

// reserveSQLite reserves n ids of table on SQLite. Its rows are numbered
// AUTOINCREMENT, past the count in sqlite_sequence, which this raises by n.
func (s *Store) reserveSQLite(ctx context.Context, table string, n int) ([]int64, error) {
	var last int64
	err := s.Tx(ctx, func(tx *Store) error {
		if err := tx.q(ctx).Exec(`INSERT INTO sqlite_sequence (name, seq) SELECT ?, 0
			WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?)`, table, table).Error; err != nil {
			return err
		}
		return tx.q(ctx).Raw(`UPDATE sqlite_sequence SET seq = max(seq, (SELECT COALESCE(MAX(id), 0) FROM `+table+`)) + ?
			WHERE name = ? RETURNING seq`, n, table).Scan(&last).Error
	})
	if err != nil {
		return nil, err
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = last - int64(n-1-i)
	}
	return ids, nil
}

// Captured is what a batch of captures writes.
type Captured struct {
	// New are new leads, each with an id reserved by LookupCapture.
	New []models.Lead
	// Completed are partial leads completed by a later submission: each
	// column is written but the id, the account and received_at.
	Completed []models.Lead
	// Events are the leads' new events, queued unless held back (failed).
	// An event already stored is left as it is.
	Events []models.Event
}

// SaveCaptured writes a batch of captures in one transaction: on SQLite
// through Tx, on Postgres because the statements of one pipeline run as one
// implicit transaction (TestSaveCapturedIsAtomic). Any conflict (an
// external_id taken meanwhile) fails the whole call with ErrConflict.
// Another error after the commit (a connection lost while reading the
// answer) cannot be told from one before it: whether the first new lead is
// stored says which.
func (s *Store) SaveCaptured(ctx context.Context, c Captured) error {
	if len(c.New)+len(c.Completed) == 0 {
		return nil
	}
	now := s.Now()
	stamp(c.New, now)
	stamp(c.Completed, now)
	queue(c.Events, now)
	for _, l := range append(c.New, c.Completed...) {
		if l.ID == 0 {
			return wrap("save captured", errors.New("a lead without an id"))
		}
	}
	if s.dialect != "postgres" {
		return wrap("save captured", s.Tx(ctx, func(tx *Store) error {
			if err := tx.q(ctx).CreateInBatches(&c.New, 200).Error; err != nil {
				return err
			}
			for i := range c.Completed {
				if err := tx.SaveLead(ctx, &c.Completed[i]); err != nil {
					return err
				}
			}
			_, fresh, err := tx.insertEvents(ctx, c.Events)
			if err != nil {
				return err
			}
			return tx.addUnsent(ctx, fresh)
		}))
	}
	return wrap("save captured", s.withPgx(ctx, func(conn *pgx.Conn) error {
		b := &pgx.Batch{}
		// A completed lead's row is found by a join of its id and account
		// with leads, planned for its rows: a plan kept from a table
		// analyzed while empty read every lead of the account. The rest
		// keeps its plans.
		if len(c.Completed) > 0 {
			b.Queue(completeLeadsSQL, leadArgs(c.Completed)...)
			ids := make([]int64, len(c.Completed))
			for i, l := range c.Completed {
				ids[i] = l.ID
			}
			b.Queue(unprepareSQL, ids)
		}
		b.Queue(keptPlansSQL)
		if len(c.New) > 0 {
			b.Queue(insertLeadsSQL, leadArgs(c.New)...)
		}
		if len(c.Events) > 0 {
			b.Queue(insertEventsSQL, eventArgs(c.Events)...)
		}
		return conn.SendBatch(ctx, b).Close()
	}))
}

// unprepareSQL drops the prepared payloads of the unsent events of the
// leads $1, as unprepare does: the events are found by the leads' queue
// rows first (an array, not a join), so the plan it keeps looks each up by
// key whatever it guessed of payload_stamp.
const unprepareSQL = `UPDATE events SET payload_stamp = 0
	WHERE id = ANY(ARRAY(SELECT event_id FROM unsent_events WHERE lead_id = ANY(CAST($1 AS bigint[])))) AND payload_stamp <> 0`

// stamp sets the zero times of new leads to now.
func stamp(ls []models.Lead, now time.Time) {
	for i := range ls {
		for _, t := range []*time.Time{&ls[i].CreatedAt, &ls[i].ReceivedAt, &ls[i].UpdatedAt} {
			if t.IsZero() {
				*t = now
			}
		}
	}
}

// queue makes new events queued and due now unless they say otherwise.
func queue(evs []models.Event, now time.Time) {
	for i := range evs {
		e := &evs[i]
		if e.Status == "" {
			e.Status = models.EventQueued
		}
		for _, t := range []*time.Time{&e.NextAttemptAt, &e.CreatedAt, &e.UpdatedAt} {
			if t.IsZero() {
				*t = now
			}
		}
	}
}

// pipeline sends the statements fill queues in one round trip on a pooled
// connection (withPgx); with keep, after keptPlansSQL, so that they keep
// their plans. Not for use inside Tx.
func (s *Store) pipeline(ctx context.Context, keep bool, fill func(*pgx.Batch) error) error {
	b := &pgx.Batch{}
	if keep {
		b.Queue(keptPlansSQL)
	}
	if err := fill(b); err != nil {
		return err
	}
	return s.withPgx(ctx, func(conn *pgx.Conn) error { return conn.SendBatch(ctx, b).Close() })
}

// withPgx runs fn on a pooled connection's own pgx.Conn, for what
// database/sql cannot say: pipelines. Not for use inside Tx.
func (s *Store) withPgx(ctx context.Context, fn func(*pgx.Conn) error) error {
	db, ok := s.conn().(*sql.DB)
	if !ok {
		return errors.New("a pipeline cannot run inside a transaction")
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("driver connection is %T, not pgx", dc)
		}
		return fn(c.Conn())
	})
}
