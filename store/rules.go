package store

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/models"
)

// SendRules lists an account's send rules in the order its page shows
// them.
func (s *Store) SendRules(ctx context.Context, accountID int64) ([]models.SendRule, error) {
	var rs []models.SendRule
	err := s.q(ctx).Where("account_id = ?", accountID).Order("position, id").Find(&rs).Error
	return rs, wrap("send rules", err)
}

// SendRule finds one send rule of an account.
func (s *Store) SendRule(ctx context.Context, accountID, id int64) (models.SendRule, error) {
	var r models.SendRule
	err := s.q(ctx).Where("account_id = ? AND id = ?", accountID, id).Take(&r).Error
	return r, wrap("send rule", err)
}

// CreateSendRule stores a new send rule at the end of its account's list,
// and its first version, made by the user by (nil for none: setup apply, a
// new dataset's default rule). ErrConflict: the account has a rule of that
// name; ErrNotFound: a destination is not the account's.
func (s *Store) CreateSendRule(ctx context.Context, r *models.SendRule, by *int64) error {
	return wrap("create send rule", s.Tx(ctx, func(tx *Store) error {
		if err := tx.ownDestinations(ctx, *r); err != nil {
			return err
		}
		var last *int
		if err := tx.q(ctx).Model(&models.SendRule{}).Where("account_id = ?", r.AccountID).
			Select("MAX(position)").Scan(&last).Error; err != nil {
			return err
		}
		r.ID, r.Position = 0, 1
		if last != nil {
			r.Position = *last + 1
		}
		now := s.Now()
		r.CreatedAt, r.UpdatedAt = now, now
		if err := tx.q(ctx).Create(r).Error; err != nil {
			return err
		}
		return tx.addRuleVersion(ctx, r.AccountID, r.ID, by, "", ruleJSON(*r), now)
	}))
}

// SaveSendRule writes a send rule's changes, and keeps the version when
// anything changed. ErrNotFound: no such rule in the account, or a
// destination is not the account's.
func (s *Store) SaveSendRule(ctx context.Context, r *models.SendRule, by *int64) error {
	return wrap("save send rule", s.Tx(ctx, func(tx *Store) error {
		old, err := tx.SendRule(ctx, r.AccountID, r.ID)
		if err != nil {
			return err
		}
		if err := tx.ownDestinations(ctx, *r); err != nil {
			return err
		}
		before, after := ruleJSON(old), ruleJSON(*r)
		if before == after {
			*r = old
			return nil
		}
		r.CreatedAt, r.Position, r.UpdatedAt = old.CreatedAt, old.Position, s.Now()
		if err := tx.q(ctx).Select("*").Omit("id", "account_id", "created_at").
			Where("account_id = ?", r.AccountID).Updates(r).Error; err != nil {
			return err
		}
		return tx.addRuleVersion(ctx, r.AccountID, r.ID, by, before, after, r.UpdatedAt)
	}))
}

// DeleteSendRule removes a send rule; its versions stay, the last saying
// who deleted it. The events it queued stay too.
func (s *Store) DeleteSendRule(ctx context.Context, accountID, id int64, by *int64) error {
	return wrap("delete send rule", s.Tx(ctx, func(tx *Store) error {
		old, err := tx.SendRule(ctx, accountID, id)
		if err != nil {
			return err
		}
		if err := tx.q(ctx).Where("account_id = ? AND id = ?", accountID, id).Delete(&models.SendRule{}).Error; err != nil {
			return err
		}
		return tx.addRuleVersion(ctx, accountID, id, by, ruleJSON(old), "", s.Now())
	}))
}

// MoveSendRule moves a rule one place up (delta -1) or down (+1) in its
// account's list of send rules, or a stage mapping among its stage's
// mappings (which send in that order); the others keep their places.
func (s *Store) MoveSendRule(ctx context.Context, accountID, id int64, delta int) error {
	return wrap("move send rule", s.Tx(ctx, func(tx *Store) error {
		rs, err := tx.SendRules(ctx, accountID)
		if err != nil {
			return err
		}
		i := -1
		for k, r := range rs {
			if r.ID == id {
				i = k
			}
		}
		if i < 0 {
			return ErrNotFound
		}
		// Send rules and stage mappings are listed apart, a stage's
		// mappings under their stage: one moves past the next of its list.
		peer := func(r models.SendRule) bool { return r.Mode != modeStage }
		if rs[i].Mode == modeStage {
			peer = func(r models.SendRule) bool { return IsStageMapping(r, rs[i].Stage) }
		}
		j := i + delta
		for j >= 0 && j < len(rs) && !peer(rs[j]) {
			j += delta
		}
		if delta == 0 || j < 0 || j >= len(rs) {
			return nil
		}
		rs[i], rs[j] = rs[j], rs[i]
		for k, r := range rs {
			if r.Position != k+1 {
				if err := tx.q(ctx).Model(&models.SendRule{}).Where("id = ?", r.ID).Update("position", k+1).Error; err != nil {
					return err
				}
			}
		}
		return nil
	}))
}

// OrderSendRules puts an account's rules in the order of ids, in one
// write a rule that changes place; the rules ids leaves out follow, in
// their order. ErrNotFound: an id is not a rule of the account, or is
// given twice.
func (s *Store) OrderSendRules(ctx context.Context, accountID int64, ids []int64) error {
	return wrap("order send rules", s.Tx(ctx, func(tx *Store) error {
		rs, err := tx.SendRules(ctx, accountID)
		if err != nil {
			return err
		}
		place := make(map[int64]int, len(rs))
		for i, id := range ids {
			place[id] = i
		}
		if len(place) != len(ids) {
			return ErrNotFound
		}
		ordered := make([]models.SendRule, len(ids))
		var rest []models.SendRule
		for _, r := range rs {
			i, ok := place[r.ID]
			if !ok {
				rest = append(rest, r)
				continue
			}
			ordered[i] = r
			delete(place, r.ID)
		}
		if len(place) > 0 {
			return ErrNotFound
		}
		for k, r := range append(ordered, rest...) {
			if r.Position != k+1 {
				if err := tx.q(ctx).Model(&models.SendRule{}).Where("id = ?", r.ID).Update("position", k+1).Error; err != nil {
					return err
				}
			}
		}
		return nil
	}))
}

// RuleVersion is one change of a send rule, with who made it.
type RuleVersion struct {
	models.SendRuleVersion
	// Email is the user's; "" when the change was not a person's (setup
	// apply, a new dataset) or the user is gone.
	Email string
}

// SendRuleVersions lists a rule's changes, newest first, even of a rule
// since deleted.
func (s *Store) SendRuleVersions(ctx context.Context, accountID, ruleID int64, limit int) ([]RuleVersion, error) {
	var vs []RuleVersion
	err := s.q(ctx).Model(&models.SendRuleVersion{}).
		Select("send_rule_versions.*, COALESCE(users.email, '') AS email").
		Joins("LEFT JOIN users ON users.id = send_rule_versions.user_id").
		Where("send_rule_versions.account_id = ? AND send_rule_versions.rule_id = ?", accountID, ruleID).
		Order("send_rule_versions.created_at DESC, send_rule_versions.id DESC").Limit(limit).Find(&vs).Error
	return vs, wrap("send rule versions", err)
}

func (s *Store) addRuleVersion(ctx context.Context, accountID, ruleID int64, by *int64, before, after string, at time.Time) error {
	return s.q(ctx).Create(&models.SendRuleVersion{AccountID: accountID, RuleID: ruleID, UserID: by,
		Before: before, After: after, CreatedAt: at}).Error
}

// ownDestinations is ErrNotFound unless each of r's destinations is its
// account's, and ErrDestinations when one is named twice or there are
// more than MaxDestinations.
func (s *Store) ownDestinations(ctx context.Context, r models.SendRule) error {
	ids := r.Destinations()
	if len(ids) > MaxDestinations {
		return ErrDestinations
	}
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return ErrDestinations
		}
		seen[id] = true
	}
	var n int64
	if err := s.q(ctx).Model(&models.Dataset{}).Where("account_id = ? AND id IN ?", r.AccountID, ids).Count(&n).Error; err != nil {
		return err
	}
	if n != int64(len(ids)) {
		return ErrNotFound
	}
	return nil
}

// MaxDestinations is how many destinations one send rule or stage mapping
// may name: each is one more event of every lead it matches.
const MaxDestinations = 10

// ruleJSON is what a version keeps of a rule (RuleSnapshot).
func ruleJSON(r models.SendRule) string { return SnapshotOf(r).JSON() }

// DefaultRule is the send rule a new dataset gets: what capture did before
// rules, every complete lead that is not junk becomes a Lead. Its name,
// "Completed leads to <dataset>", is cut to name.MaxLen characters (the
// dataset's name ending in "…") so that it is a name every form and setup
// file takes: an export of the account always applies again.
func DefaultRule(d models.Dataset) models.SendRule {
	return models.SendRule{AccountID: d.AccountID, DatasetID: d.ID, Name: fitName("Completed leads to "+d.Name, ""),
		Mode: "automatic_completed", EventName: "Lead", Combinator: "and", Conditions: "[]", Enabled: true}
}

// fitName is n then suffix, n cut (ending in "…") so that the whole is
// at most name.MaxLen characters.
func fitName(n, suffix string) string {
	room := name.MaxLen - utf8.RuneCountInString(suffix)
	if utf8.RuneCountInString(n) > room {
		n = string([]rune(n)[:room-1]) + "…"
	}
	return n + suffix
}
