package store

import (
	"context"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// SearchText is searchText, for the test that Postgres can read it through
// the trigram index of migration 0007.
const SearchText = searchText

// SetFewUnsent sets how many events of one unsent status Events reads by
// id, for a test of both ways it lists them; it restores it after.
func SetFewUnsent(t interface{ Cleanup(func()) }, n int) {
	old := fewUnsent
	fewUnsent = n
	t.Cleanup(func() { fewUnsent = old })
}

// RecentContactsSQL, ExistingLeadsSQL (the capture's lookups) and
// ClaimPostgresSQL are the hot statements whose plans must not depend on
// statistics.
const (
	RecentContactsSQL = recentContactsSQL
	ExistingLeadsSQL  = existingLeadsSQL
)

var ClaimPostgresSQL = claimPostgresSQL

// KeptPlansSQL is what the writes and lookups that keep their plans run
// first in their transaction.
const KeptPlansSQL = keptPlansSQL

// OpenNoticing opens the Postgres database at url and tells notice each
// notice its connections receive.
func OpenNoticing(ctx context.Context, url string, notice func(string)) (*Store, error) {
	return Open(ctx, Options{PostgresURL: url, notice: notice})
}

// PlanCacheMode is the plan_cache_mode of the store's connections.
func PlanCacheMode(t interface{ Context() context.Context }, s *Store) (string, error) {
	var mode string
	err := s.q(t.Context()).Raw("SHOW plan_cache_mode").Scan(&mode).Error
	return mode, err
}

// EventStateSQL is the database's event_state (migration 0036) of status
// and reason, for the test that it is models.Event.State.
func (s *Store) EventStateSQL(ctx context.Context, status models.EventStatus, reason string) (models.EventStatus, error) {
	var state string
	err := s.q(ctx).Raw("SELECT event_state(?, ?)", string(status), reason).Scan(&state).Error
	return models.EventStatus(state), err
}

// CountBucketSQL is the database's count_bucket and whole_seconds of t, for
// the test that they are Bucket and Unix time.
func (s *Store) CountBucketSQL(ctx context.Context, t time.Time) (bucket, seconds int64, err error) {
	row := s.q(ctx).Raw("SELECT count_bucket(?), whole_seconds(?)", t, t).Row()
	err = row.Scan(&bucket, &seconds)
	return bucket, seconds, err
}

// ExecSQL runs a statement as it is: tests write rows the way no store
// method does (a seeded history, say) to see what the triggers make of it.
func (s *Store) ExecSQL(ctx context.Context, q string) error {
	return s.q(ctx).Exec(q).Error
}

// CampaignSQL is the database's utm_campaign of url, for the test that it
// is Campaign.
func (s *Store) CampaignSQL(ctx context.Context, url string) (string, error) {
	var c string
	err := s.q(ctx).Raw("SELECT utm_campaign(?)", url).Scan(&c).Error
	return c, err
}
