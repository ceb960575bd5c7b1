package store

import (
	"context"

	"github.com/leadsignal/leadsignal/models"
)

// AppendStage adds a stage named name at the end of an account's stages,
// as setup apply does for a stage mapping's stage the account lacks.
// ErrConflict: one of the account's stages has that name or alias, compared
// as stage changes find their stage (name.StageKey).
func (s *Store) AppendStage(ctx context.Context, accountID int64, name string) (models.Stage, error) {
	var st models.Stage
	err := s.Tx(ctx, func(tx *Store) error {
		ss, err := tx.Stages(ctx, accountID)
		if err != nil {
			return err
		}
		st = models.Stage{AccountID: accountID, Name: name, Position: 1, CreatedAt: s.Now()}
		if _, taken := labelOwner(ss, name, 0); taken {
			return ErrConflict
		}
		for _, o := range ss {
			st.Position = max(st.Position, o.Position+1)
		}
		return tx.q(ctx).Create(&st).Error
	})
	return st, wrap("append stage", err)
}
