package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/models"
)

// MaxAliases bounds a stage's aliases.
const MaxAliases = 50

// AliasError says why a stage's aliases cannot be saved: Alias is the
// label at fault.
type AliasError struct {
	Alias   string
	Message string
}

func (e *AliasError) Error() string { return e.Message }

// labelOwner is the stage of ss other than except (an id) whose name or
// alias reads as label (name.StageKey), and true; false when none.
func labelOwner(ss []models.Stage, label string, except int64) (models.Stage, bool) {
	k := name.StageKey(label)
	if k == "" {
		return models.Stage{}, false
	}
	for _, st := range ss {
		if st.ID == except {
			continue
		}
		if name.StageKey(st.Name) == k {
			return st, true
		}
		for _, a := range st.Aliases {
			if name.StageKey(a) == k {
				return st, true
			}
		}
	}
	return models.Stage{}, false
}

// CleanAliases checks a stage's aliases as a person or a setup file gives
// them, and returns them trimmed, each label once (by name.StageKey), with
// those that read as the stage's own name left out. It knows nothing of the
// account's other stages (SetStageAliases checks those).
func CleanAliases(stage string, aliases []string) ([]string, error) {
	seen := map[string]bool{name.StageKey(stage): true}
	out := []string{}
	for _, a := range aliases {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if msg := name.StageProblem(a); msg != "" {
			return nil, &AliasError{Alias: a, Message: fmt.Sprintf("alias %q: %s", a, msg)}
		}
		k := name.StageKey(a)
		if k == "" {
			return nil, &AliasError{Alias: a, Message: fmt.Sprintf("alias %q has no letter or digit: stages are matched by their letters and digits", a)}
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, a)
	}
	if len(out) > MaxAliases {
		return nil, &AliasError{Message: fmt.Sprintf("a stage takes at most %d aliases, not %d", MaxAliases, len(out))}
	}
	return out, nil
}

// SetStageAliases replaces the aliases of one of an account's stages
// (CleanAliases). An *AliasError: an alias is not a label, or reads as
// another stage's name or alias, or as a CRM connection's label mapped to
// another stage. Changes recorded earlier under a new
// alias count as the stage from now on (name.Stages); they are not
// rewritten.
func (s *Store) SetStageAliases(ctx context.Context, accountID, id int64, aliases []string) (models.Stage, error) {
	var st models.Stage
	err := s.Tx(ctx, func(tx *Store) error {
		ss, err := tx.lockStages(ctx, accountID)
		if err != nil {
			return err
		}
		i := indexOfStage(ss, id)
		if i < 0 {
			return ErrNotFound
		}
		st = ss[i]
		clean, err := CleanAliases(st.Name, aliases)
		if err != nil {
			return err
		}
		labels, err := tx.MappedCRMStages(ctx, accountID)
		if err != nil {
			return err
		}
		for _, a := range clean {
			if o, taken := labelOwner(ss, a, id); taken {
				return &AliasError{Alias: a, Message: fmt.Sprintf("%q already names the stage %s", a, o.Name)}
			}
			// A CRM connection's label mapped to another stage reads as
			// that stage: an alias cannot take it from there.
			for _, l := range labels {
				if name.StageKey(l.Label) == name.StageKey(a) && !strings.EqualFold(l.Stage, st.Name) {
					return &AliasError{Alias: a, Message: fmt.Sprintf(
						"%q is a CRM connection's label mapped to the stage %s: map it to %s on the connection's page instead", a, l.Stage, st.Name)}
				}
			}
		}
		st.Aliases = clean
		return tx.q(ctx).Model(&models.Stage{}).Where("account_id = ? AND id = ?", accountID, id).
			Update("aliases", models.Labels(clean)).Error
	})
	return st, wrap("stage aliases", err)
}

// AddStageAlias adds label to the aliases of one of an account's stages,
// as the CSV preview's one click does (SetStageAliases).
func (s *Store) AddStageAlias(ctx context.Context, accountID, id int64, label string) (models.Stage, error) {
	st, err := s.Stage(ctx, accountID, id)
	if err != nil {
		return st, err
	}
	return s.SetStageAliases(ctx, accountID, id, append(st.Aliases, label))
}

// lockStages reads an account's stages in a transaction, locking them on
// Postgres, so that two writers of its labels take turns.
func (s *Store) lockStages(ctx context.Context, accountID int64) ([]models.Stage, error) {
	q := s.q(ctx).Where("account_id = ?", accountID).Order("position, id")
	if s.dialect == "postgres" {
		q = q.Clauses(forUpdate())
	}
	var ss []models.Stage
	err := q.Find(&ss).Error
	return ss, err
}

func indexOfStage(ss []models.Stage, id int64) int {
	for i, st := range ss {
		if st.ID == id {
			return i
		}
	}
	return -1
}
