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
// needs (LookupCapture), once to write (InsertCaptured). On Postgres each
// is one round trip: the statements go out together in a pipeline.

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

// ExistingLead is a lead found by its external id.
type ExistingLead struct {
	ID      int64
	Partial bool
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
}

// LookupCapture answers the queries, by account id. On Postgres it also
// reserves reserve lead ids for the batch's new leads (unused ones are
// simply skipped); on SQLite it reserves none and InsertCaptured numbers
// the leads.
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
// email hashes $1 or phone hashes $3: one index lookup per hash, as long as
// it is planned for its parameters (Open) and the table has statistics
// (AnalyzeNew). "email_hash = ANY(array)" would let a plan settle for the
// account's own index.
const recentContactsSQL = `
SELECT l.email_hash, l.phone_hash, l.created_at FROM unnest(CAST($1 AS text[])) AS h(hash)
CROSS JOIN LATERAL (SELECT email_hash, phone_hash, created_at FROM leads
	WHERE account_id = $2 AND email_hash = h.hash AND NOT partial) l
UNION ALL
SELECT l.email_hash, l.phone_hash, l.created_at FROM unnest(CAST($3 AS text[])) AS h(hash)
CROSS JOIN LATERAL (SELECT email_hash, phone_hash, created_at FROM leads
	WHERE account_id = $2 AND phone_hash = h.hash AND NOT partial) l`

// lookupPipelined is LookupCapture on Postgres: every query of the batch,
// and the reservation, in one round trip.
func (s *Store) lookupPipelined(ctx context.Context, qs []CaptureQuery, reserve int, out map[int64]*CaptureFacts) ([]int64, error) {
	var ids []int64
	err := s.withPgx(ctx, func(conn *pgx.Conn) error {
		b := &pgx.Batch{}
		for _, q := range qs {
			f := out[q.AccountID]
			if len(q.ExternalIDs) > 0 {
				b.Queue(`SELECT l.external_id, l.id, l.partial FROM unnest(CAST($1 AS text[])) AS x(id)
					JOIN leads l ON l.account_id = $2 AND l.external_id = x.id`, q.ExternalIDs, q.AccountID).
					Query(func(rows pgx.Rows) error {
						var ext string
						var l ExistingLead
						_, err := pgx.ForEachRow(rows, []any{&ext, &l.ID, &l.Partial}, func() error { f.Existing[ext] = l; return nil })
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
			b.Queue(`SELECT id, name, pixel_id, ldu FROM datasets WHERE account_id = $1 ORDER BY lower(name), id`, q.AccountID).
				Query(func(rows pgx.Rows) error {
					var d models.Dataset
					_, err := pgx.ForEachRow(rows, []any{&d.ID, &d.Name, &d.PixelID, &d.LDU}, func() error {
						d.AccountID = q.AccountID
						f.Datasets = append(f.Datasets, d)
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
		return conn.SendBatch(ctx, b).Close()
	})
	return ids, err
}

// lookupOne is LookupCapture for one account, query by query.
func (s *Store) lookupOne(ctx context.Context, q CaptureQuery, f *CaptureFacts) error {
	if len(q.ExternalIDs) > 0 {
		var found []struct {
			ExternalID string
			ID         int64
			Partial    bool
		}
		if err := s.q(ctx).Model(&models.Lead{}).Select("external_id, id, partial").
			Where("account_id = ? AND external_id IN ?", q.AccountID, q.ExternalIDs).Scan(&found).Error; err != nil {
			return err
		}
		for _, l := range found {
			f.Existing[l.ExternalID] = ExistingLead{ID: l.ID, Partial: l.Partial}
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
	f.Datasets, err = s.Datasets(ctx, q.AccountID)
	return err
}

// orNone is vs, or a list whose one value is never a hash: an empty list
// would be "IN (NULL)", harmless but obscure.
func orNone(vs []string) []string {
	if len(vs) == 0 {
		return []string{"x"}
	}
	return vs
}

// InsertCaptured stores new leads and their events in one transaction. On
// Postgres every lead must carry an id reserved by LookupCapture; on SQLite
// the leads are numbered as they are stored. eventsFor makes the events
// once the leads have their ids; it may return none. The events come back
// as stored, without their own ids on Postgres (nothing needs them).
//
// It is atomic: on SQLite through Tx, on Postgres because the statements of
// one pipeline run as one implicit transaction (TestInsertCapturedIsAtomic).
// Any conflict (an external_id taken meanwhile) fails the whole call with
// ErrConflict. Another error after the commit (a connection lost while
// reading the answer) cannot be told from one before it: on Postgres,
// whether the first lead's reserved id is stored says which.
func (s *Store) InsertCaptured(ctx context.Context, ls []models.Lead, eventsFor func([]models.Lead) []models.Event) ([]models.Event, error) {
	if len(ls) == 0 {
		return nil, nil
	}
	now := time.Now().UTC()
	stamp(ls, now)
	if s.dialect != "postgres" {
		var evs []models.Event
		err := s.Tx(ctx, func(tx *Store) error {
			if err := tx.q(ctx).CreateInBatches(&ls, 200).Error; err != nil {
				return err
			}
			evs = eventsFor(ls)
			if len(evs) == 0 {
				return nil
			}
			queue(evs, now)
			if err := tx.q(ctx).CreateInBatches(&evs, 500).Error; err != nil {
				return err
			}
			return tx.addUnsent(ctx, evs)
		})
		return evs, wrap("insert captured", err)
	}
	for _, l := range ls {
		if l.ID == 0 {
			return nil, wrap("insert captured", errors.New("a lead without a reserved id"))
		}
	}
	evs := eventsFor(ls)
	queue(evs, now)
	err := s.withPgx(ctx, func(conn *pgx.Conn) error {
		b := &pgx.Batch{}
		b.Queue(insertLeadsSQL, leadArgs(ls)...)
		if len(evs) > 0 {
			b.Queue(insertEventsSQL, eventArgs(evs)...)
		}
		return conn.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return nil, wrap("insert captured", err)
	}
	return evs, nil
}

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
