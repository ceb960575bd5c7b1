package store

import (
	"context"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// AppendStage adds a stage named name at the end of an account's stages,
// as setup apply does for a stage mapping's stage the account lacks.
// ErrConflict: the account has a stage of that name, ignoring case (as
// stage changes and mappings find stages).
func (s *Store) AppendStage(ctx context.Context, accountID int64, name string) (models.Stage, error) {
	var st models.Stage
	err := s.Tx(ctx, func(tx *Store) error {
		ss, err := tx.Stages(ctx, accountID)
		if err != nil {
			return err
		}
		st = models.Stage{AccountID: accountID, Name: name, Position: 1, CreatedAt: time.Now().UTC()}
		for _, o := range ss {
			if strings.EqualFold(o.Name, name) {
				return ErrConflict
			}
			st.Position = max(st.Position, o.Position+1)
		}
		return tx.q(ctx).Create(&st).Error
	})
	return st, wrap("append stage", err)
}
