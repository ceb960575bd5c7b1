package store

import (
	"context"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// EachRecentLead calls fn with each lead of an account captured since, newest
// first, stopping at fn's first error: for a rule's preview and for
// applying a rule to recent leads. The lead passed is reused between calls.
func (s *Store) EachRecentLead(ctx context.Context, accountID int64, since time.Time, fn func(*models.Lead) error) error {
	rows, err := s.q(ctx).Model(&models.Lead{}).Where("account_id = ? AND created_at >= ?", accountID, since.UTC()).
		Order("created_at DESC, id DESC").Rows()
	if err != nil {
		return wrap("recent leads", err)
	}
	defer rows.Close()
	var l models.Lead
	for rows.Next() {
		l = models.Lead{}
		if err := s.q(ctx).ScanRows(rows, &l); err != nil {
			return wrap("recent leads", err)
		}
		if err := fn(&l); err != nil {
			return err
		}
	}
	return wrap("recent leads", rows.Err())
}
