package store

import (
	"context"
	"fmt"
	"time"
)

// A migration step never rewrites a big table in its one transaction: it
// adds the column, and a backfill gives the rows captured before it their
// value after start, a batch of leads per transaction. Readers fall back
// to what the value is derived from until the backfill reaches their row
// (docs/operations.md, "Migrations").

// backfill fills a value into the leads that a migration step left
// without it.
type backfill struct {
	// name is its row in schema_backfills: the step it completes.
	name string
	// postgres and sqlite update the leads with after < id <= upTo (the
	// two parameters) that still lack the value, and no other: a batch run
	// again changes nothing.
	postgres, sqlite string
}

// backfills run in this order.
var backfills = []backfill{{
	// The phone's region as capture writes it (internal/capture): match
	// keys' phone_country when the phone parsed, which phone_e164 says.
	// Leads that already have one, from capture or from the first version
	// of 0016, are left alone.
	name: "0016_lead_phone_country",
	postgres: `UPDATE leads SET phone_country = COALESCE(CAST(match_keys AS jsonb) ->> 'phone_country', '')
		WHERE id > ? AND id <= ? AND phone_country = '' AND phone_e164 <> '' AND match_keys LIKE '%"phone_country"%'`,
	sqlite: `UPDATE leads SET phone_country = COALESCE(json_extract(match_keys, '$.phone_country'), '')
		WHERE id > ? AND id <= ? AND phone_country = '' AND phone_e164 <> '' AND match_keys LIKE '%"phone_country"%'
		AND json_valid(match_keys)`,
}}

// backfillBatch is how many leads one backfill transaction reads.
var backfillBatch = 1000

// BackfillStep is what one call of BackfillNext did.
type BackfillStep struct {
	// Name is the backfill its batch worked on ("" when none was left).
	Name string
	// Filled counts the leads the batch changed.
	Filled int64
	// Finished says this batch is the one that recorded the backfill
	// done: of replicas running it at once, exactly one.
	Finished bool
	// Done says no backfill is left.
	Done bool
}

// BackfillNext runs the next batch of the first backfill that is not
// done, in one transaction. Each batch moves the backfill's place in
// schema_backfills in the same transaction as its leads, so a backfill
// stopped midway (shutdown, crash, error) goes on from there at the next
// start, and one finished is not read again. Replicas running it at once
// take the batches in turn: on Postgres each batch locks the backfill's
// row, on SQLite the writer lock does. serve runs it batch after batch
// (internal/upkeep) until Done.
func (s *Store) BackfillNext(ctx context.Context) (BackfillStep, error) {
	for i, b := range backfills {
		if err := s.startBackfill(ctx, b); err != nil {
			return BackfillStep{}, err
		}
		n, done, finished, err := s.backfillBatch(ctx, b)
		if err != nil {
			return BackfillStep{}, err
		}
		if !done || finished {
			return BackfillStep{Name: b.name, Filled: n, Finished: finished, Done: finished && i == len(backfills)-1}, nil
		}
	}
	return BackfillStep{Done: true}, nil
}

// startBackfill gives b its row in schema_backfills, at the first lead,
// unless it has one.
func (s *Store) startBackfill(ctx context.Context, b backfill) error {
	err := s.q(ctx).Exec(`INSERT INTO schema_backfills (name, after_id) VALUES (?, 0) ON CONFLICT (name) DO NOTHING`, b.name).Error
	if err != nil {
		return fmt.Errorf("store: backfill %s: %w", b.name, err)
	}
	return nil
}

// backfillBatch runs b on the next backfillBatch leads, in one
// transaction, and returns how many it changed. done is true when b has
// nothing left, finished when this call is the one that recorded it.
func (s *Store) backfillBatch(ctx context.Context, b backfill) (filled int64, done, finished bool, err error) {
	err = s.Tx(ctx, func(tx *Store) error {
		lock, update := tx.lockRead(), b.sqlite
		if tx.dialect == "postgres" {
			update = b.postgres
		}
		var after int64
		if err := tx.q(ctx).Raw(`SELECT after_id, done_at IS NOT NULL FROM schema_backfills WHERE name = ?`+lock, b.name).
			Row().Scan(&after, &done); err != nil || done {
			return err
		}
		// The id of the batch's last lead, by the primary key; NULL when
		// no lead is left.
		var upTo *int64
		if err := tx.q(ctx).Raw(`SELECT max(id) FROM (SELECT id FROM leads WHERE id > ? ORDER BY id LIMIT ?) batch`,
			after, backfillBatch).Row().Scan(&upTo); err != nil {
			return err
		}
		if upTo == nil {
			done, finished = true, true
			return tx.q(ctx).Exec(`UPDATE schema_backfills SET done_at = ? WHERE name = ?`, time.Now().UTC(), b.name).Error
		}
		res := tx.q(ctx).Exec(update, after, *upTo)
		if res.Error != nil {
			return res.Error
		}
		filled = res.RowsAffected
		return tx.q(ctx).Exec(`UPDATE schema_backfills SET after_id = ? WHERE name = ?`, *upTo, b.name).Error
	})
	if err != nil {
		return 0, false, false, fmt.Errorf("store: backfill %s: %w", b.name, err)
	}
	return filled, done, finished, nil
}
