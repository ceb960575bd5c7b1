package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/models"
)

// MaxStages bounds the stage list ArrangeStages makes: a funnel has a
// dozen stages at most, and the Stages page counts changes of the first
// 200 labels.
const MaxStages = 200

// ArrangeStages makes an account's stage list want, as a setup file's
// stages ask: want holds every one of the account's stages (by ID; a
// stage it leaves out is an error, as the list never loses a stage this
// way) and new ones (ID 0, added), in the order they take. Each stage gets
// want's aliases (CleanAliases) and booking, at most one of them; names of
// stages it keeps are not changed (RenameStage renames). An *AliasError:
// two stages of want claim one label, by name or alias (name.StageKey).
// It returns the list as it is now.
func (s *Store) ArrangeStages(ctx context.Context, accountID int64, want []models.Stage) ([]models.Stage, error) {
	var out []models.Stage
	err := s.Tx(ctx, func(tx *Store) error {
		ss, err := tx.lockStages(ctx, accountID)
		if err != nil {
			return err
		}
		list, err := arranged(ss, want)
		if err != nil {
			return err
		}
		now := s.Now()
		for i := range list {
			st := &list[i]
			st.AccountID, st.Position = accountID, i+1
			if st.ID == 0 {
				st.CreatedAt = now
				if err := tx.q(ctx).Create(st).Error; err != nil {
					return err
				}
				continue
			}
			if err := tx.q(ctx).Model(&models.Stage{}).Where("account_id = ? AND id = ?", accountID, st.ID).
				Updates(map[string]any{"position": st.Position, "aliases": st.Aliases, "booking": st.Booking}).Error; err != nil {
				return err
			}
		}
		out = list
		return nil
	})
	return out, wrap("arrange stages", err)
}

// arranged is the stage list want asks of an account whose stages are
// ss: the stored stages with want's order, aliases and booking, the new
// ones with their names; an error when want cannot be the list.
func arranged(ss, want []models.Stage) ([]models.Stage, error) {
	if len(want) > MaxStages {
		return nil, fmt.Errorf("an account has at most %d stages, not %d", MaxStages, len(want))
	}
	list := make([]models.Stage, len(want))
	kept := map[int64]bool{}
	owner := map[string]int{} // name.StageKey of each label: the index of the stage that claims it
	claim := func(label string, i int) error {
		k := name.StageKey(label)
		if o, taken := owner[k]; taken && o != i {
			return &AliasError{Alias: label, Message: fmt.Sprintf("%q names both the stage %s and the stage %s", label, list[o].Name, list[i].Name)}
		}
		owner[k] = i
		return nil
	}
	bookings := 0
	for i, w := range want {
		st := models.Stage{Name: w.Name}
		if w.ID != 0 {
			j := indexOfStage(ss, w.ID)
			if j < 0 || kept[w.ID] {
				return nil, ErrNotFound
			}
			kept[w.ID], st = true, ss[j]
		} else if msg := name.StageProblem(w.Name); msg != "" || name.StageKey(w.Name) == "" {
			return nil, &AliasError{Alias: w.Name, Message: fmt.Sprintf("stage %q cannot be a stage's name", w.Name)}
		}
		clean, err := CleanAliases(st.Name, w.Aliases)
		if err != nil {
			return nil, err
		}
		st.Aliases, st.Booking = clean, w.Booking
		if st.Booking {
			bookings++
		}
		list[i] = st
		for _, label := range append([]string{st.Name}, clean...) {
			if err := claim(label, i); err != nil {
				return nil, err
			}
		}
	}
	if len(kept) != len(ss) {
		return nil, errors.New("the list leaves out a stage of the account: stages are deleted one by one, on the Stages page")
	}
	if bookings > 1 {
		return nil, errors.New("one stage at most is the booking stage")
	}
	return list, nil
}
