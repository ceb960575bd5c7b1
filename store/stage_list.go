package store

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/leadsignal/leadsignal/models"
)

// The Stages page's changes: an account's stage list (rename, order, the
// booking stage, delete) and its stage mappings (order, the template).

// ErrStageInUse means a stage cannot be deleted: a stage mapping names it.
var ErrStageInUse = errors.New("store: a stage mapping uses the stage")

// modeStage is the mode of a stage mapping (rule.Stage).
const modeStage = "stage"

// Stage finds one of an account's stages.
func (s *Store) Stage(ctx context.Context, accountID, id int64) (models.Stage, error) {
	var st models.Stage
	err := s.q(ctx).Where("account_id = ? AND id = ?", accountID, id).Take(&st).Error
	return st, wrap("stage", err)
}

// IsStageMapping reports whether send rule r is a stage mapping of stage
// (ignoring case, as stage changes find their mappings).
func IsStageMapping(r models.SendRule, stage string) bool {
	return r.Mode == modeStage && strings.EqualFold(r.Stage, stage)
}

// RenameStage names an account's stage to, and its stage mappings with
// it: each saved as a new version by the user by, a mapping named after
// its stage ("<stage> to <event>") named again (MappingName). Stage changes
// recorded before keep the name they were sent with. ErrConflict: another
// of the account's stages has the name or an alias that reads as it
// (name.StageKey).
func (s *Store) RenameStage(ctx context.Context, accountID, id int64, to string, by *int64) (models.Stage, error) {
	var st models.Stage
	err := s.Tx(ctx, func(tx *Store) error {
		ss, err := tx.Stages(ctx, accountID)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(ss, func(x models.Stage) bool { return x.ID == id })
		if i < 0 {
			return ErrNotFound
		}
		if _, taken := labelOwner(ss, to, id); taken {
			return ErrConflict
		}
		st = ss[i]
		from := st.Name
		if from == to {
			return nil
		}
		if err := tx.q(ctx).Model(&models.Stage{}).Where("account_id = ? AND id = ?", accountID, id).Update("name", to).Error; err != nil {
			return err
		}
		st.Name = to
		rules, err := tx.SendRules(ctx, accountID)
		if err != nil {
			return err
		}
		datasets, err := tx.Datasets(ctx, accountID)
		if err != nil {
			return err
		}
		for _, r := range rules {
			if !IsStageMapping(r, from) {
				continue
			}
			was := r
			r.Stage = to
			if namedAfter(was) {
				r.Name = MappingName(r, datasetName(datasets, r.DatasetID), rules)
			}
			if err := tx.SaveSendRule(ctx, &r, by); err != nil {
				return err
			}
			for k := range rules {
				if rules[k].ID == r.ID {
					rules[k] = r
				}
			}
		}
		return nil
	})
	return st, wrap("rename stage", err)
}

// MoveStage moves a stage one place up (delta -1) or down (+1) in its
// account's list.
func (s *Store) MoveStage(ctx context.Context, accountID, id int64, delta int) error {
	return wrap("move stage", s.Tx(ctx, func(tx *Store) error {
		ss, err := tx.Stages(ctx, accountID)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(ss, func(x models.Stage) bool { return x.ID == id })
		if i < 0 {
			return ErrNotFound
		}
		j := i + delta
		if j < 0 || j >= len(ss) {
			return nil
		}
		ss[i], ss[j] = ss[j], ss[i]
		for k, x := range ss {
			if x.Position != k+1 {
				if err := tx.q(ctx).Model(&models.Stage{}).Where("id = ?", x.ID).Update("position", k+1).Error; err != nil {
					return err
				}
			}
		}
		return nil
	}))
}

// SetBookingStage makes an account's stage its booking stage, the only
// one (booking true), or no longer one (false): the stage a lead is booked
// at, whose mappings an old setup file's booking rules become
// (BookingStage). What sends when a lead reaches it is its mappings.
func (s *Store) SetBookingStage(ctx context.Context, accountID, id int64, booking bool) error {
	return wrap("set booking stage", s.Tx(ctx, func(tx *Store) error {
		if _, err := tx.Stage(ctx, accountID, id); err != nil {
			return err
		}
		if booking {
			if err := tx.q(ctx).Model(&models.Stage{}).Where("account_id = ? AND id <> ? AND booking", accountID, id).
				Update("booking", false).Error; err != nil {
				return err
			}
		}
		return tx.q(ctx).Model(&models.Stage{}).Where("account_id = ? AND id = ?", accountID, id).Update("booking", booking).Error
	}))
}

// BookingStage finds the booking stage among an account's stages ss, in
// order: the first marked booking; false when none is.
func BookingStage(ss []models.Stage) (models.Stage, bool) {
	i := slices.IndexFunc(ss, func(x models.Stage) bool { return x.Booking })
	if i < 0 {
		return models.Stage{}, false
	}
	return ss[i], true
}

// DeleteStage removes one of an account's stages; the stage changes
// recorded under its name stay. ErrStageInUse: a stage mapping names it.
func (s *Store) DeleteStage(ctx context.Context, accountID, id int64) error {
	return wrap("delete stage", s.Tx(ctx, func(tx *Store) error {
		st, err := tx.Stage(ctx, accountID, id)
		if err != nil {
			return err
		}
		rules, err := tx.SendRules(ctx, accountID)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(rules, func(r models.SendRule) bool { return IsStageMapping(r, st.Name) }) {
			return ErrStageInUse
		}
		return tx.q(ctx).Where("account_id = ? AND id = ?", accountID, id).Delete(&models.Stage{}).Error
	}))
}

// StageCount is how many stage changes an account's leads had to a stage,
// by its name as it was sent.
type StageCount struct {
	Stage   string
	Changes int64
}

// StageChangeCounts counts an account's stage changes per stage, junk
// markers aside, most first, at most limit stages (the index on
// stage_changes' account and stage finds them).
func (s *Store) StageChangeCounts(ctx context.Context, accountID int64, limit int) ([]StageCount, error) {
	var out []StageCount
	err := s.q(ctx).Table("stage_changes").
		Select("stage, COUNT(*) AS changes").
		Where("account_id = ? AND stage NOT IN (?, ?)", accountID, models.StageJunk, models.StageNotJunk).
		Group("stage").Order("changes DESC, stage").Limit(limit).Scan(&out).Error
	return out, wrap("stage change counts", err)
}

// MappingName is the name stage mapping m gets among the account's send
// rules: "<stage> to <event>", as the setup file names a mapping it gives
// no name; "<stage> to <event> (<dataset>)" when another of rules has that
// name (ignoring case, as names are unique), then with a number after.
// Names are cut to fit name.MaxLen. m itself (its ID) does not count.
func MappingName(m models.SendRule, dataset string, rules []models.SendRule) string {
	taken := func(n string) bool {
		return slices.ContainsFunc(rules, func(r models.SendRule) bool { return r.ID != m.ID && strings.EqualFold(r.Name, n) })
	}
	base := m.Stage + " to " + m.EventName
	if n := fitName(base, ""); !taken(n) {
		return n
	}
	withDataset := base + " (" + dataset + ")"
	if n := fitName(withDataset, ""); !taken(n) {
		return n
	}
	for k := 2; ; k++ {
		if n := fitName(withDataset, " "+strconv.Itoa(k)); !taken(n) {
			return n
		}
	}
}

// namedAfter reports whether mapping r bears a name MappingName gives
// ("<stage> to <event>", maybe more), not one a person chose: such a name
// follows the mapping when its stage, event or dataset change.
func namedAfter(r models.SendRule) bool {
	base := strings.ToLower(r.Stage + " to " + r.EventName)
	n := strings.ToLower(r.Name)
	cut, ok := strings.CutSuffix(n, "…")
	return strings.HasPrefix(n, base) || ok && strings.HasPrefix(base, cut)
}

// NameMapping gives stage mapping m, new or changed, its name: MappingName
// when it is new or was named after its stage and event (as saved,
// before), else the name it has.
func NameMapping(m models.SendRule, before *models.SendRule, dataset string, rules []models.SendRule) string {
	if before != nil && !namedAfter(*before) {
		return before.Name
	}
	if before != nil && before.Stage == m.Stage && before.EventName == m.EventName && before.DatasetID == m.DatasetID {
		return before.Name
	}
	return MappingName(m, dataset, rules)
}

func datasetName(ds []models.Dataset, id int64) string {
	for _, d := range ds {
		if d.ID == id {
			return d.Name
		}
	}
	return ""
}

// StartStageTemplate creates TemplateMappings on the account's dataset
// datasetID, by the user by, and the template's stages the account lacks
// (at the end of its list): all of it, or nothing. The mappings take the
// list's spelling of their stage, and names MappingName gives.
// ErrConflict: the account has stage mappings already; ErrNotFound: the
// dataset is not the account's.
func (s *Store) StartStageTemplate(ctx context.Context, accountID, datasetID int64, by *int64) ([]models.SendRule, error) {
	var made []models.SendRule
	err := s.Tx(ctx, func(tx *Store) error {
		d, err := tx.Dataset(ctx, accountID, datasetID)
		if err != nil {
			return err
		}
		rules, err := tx.SendRules(ctx, accountID)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(rules, func(r models.SendRule) bool { return r.Mode == modeStage }) {
			return ErrConflict
		}
		ss, err := tx.Stages(ctx, accountID)
		if err != nil {
			return err
		}
		for _, m := range TemplateMappings(d) {
			i := slices.IndexFunc(ss, func(x models.Stage) bool { return strings.EqualFold(x.Name, m.Stage) })
			if i < 0 {
				st, err := tx.AppendStage(ctx, accountID, m.Stage)
				if err != nil {
					return err
				}
				ss = append(ss, st)
				i = len(ss) - 1
			}
			m.Stage = ss[i].Name
			m.Name = MappingName(m, d.Name, rules)
			if err := tx.CreateSendRule(ctx, &m, by); err != nil {
				return err
			}
			rules = append(rules, m)
			made = append(made, m)
		}
		return nil
	})
	return made, wrap("start stage template", err)
}
