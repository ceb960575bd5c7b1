package store

import (
	"context"
	"errors"

	"github.com/leadsignal/leadsignal/models"
)

// ErrLastOwner means a change would leave an account without an owner.
var ErrLastOwner = errors.New("store: an account needs at least one owner")

// CreateAccount stores a new account and, when ownerID is not zero, makes
// that user its owner in the same transaction. ErrConflict when the slug is
// taken.
func (s *Store) CreateAccount(ctx context.Context, a models.Account, ownerID int64) (models.Account, error) {
	err := s.Tx(ctx, func(tx *Store) error {
		if err := tx.q(ctx).Create(&a).Error; err != nil {
			return err
		}
		if err := tx.addTemplateStages(ctx, a.ID); err != nil {
			return err
		}
		if ownerID == 0 {
			return nil
		}
		return tx.q(ctx).Create(&models.Membership{AccountID: a.ID, UserID: ownerID, Role: models.RoleOwner}).Error
	})
	return a, wrap("create account", err)
}

// AccountBySlug finds an account by its slug, for the command line.
func (s *Store) AccountBySlug(ctx context.Context, slug string) (models.Account, error) {
	var a models.Account
	err := s.q(ctx).Where("slug = ?", slug).Take(&a).Error
	return a, wrap("account by slug", err)
}

// AccountForUser returns an account with the user's role in it, or
// ErrNotFound when the user is not a member: another account's id looks
// exactly like one that does not exist.
func (s *Store) AccountForUser(ctx context.Context, userID, accountID int64) (models.AccountAccess, error) {
	as, err := s.accountsForUser(ctx, "m.user_id = ? AND a.id = ?", userID, accountID)
	if err == nil && len(as) == 0 {
		err = ErrNotFound
	}
	if err != nil {
		return models.AccountAccess{}, wrap("account for user", err)
	}
	return as[0], nil
}

// AccountsForUser lists the accounts a user is a member of, by name.
func (s *Store) AccountsForUser(ctx context.Context, userID int64) ([]models.AccountAccess, error) {
	as, err := s.accountsForUser(ctx, "m.user_id = ?", userID)
	return as, wrap("accounts for user", err)
}

// HasAccounts reports whether the user is a member of any account.
func (s *Store) HasAccounts(ctx context.Context, userID int64) (bool, error) {
	var n int64
	err := s.q(ctx).Raw("SELECT COUNT(*) FROM (SELECT 1 FROM memberships WHERE user_id = ? LIMIT 1) m", userID).Scan(&n).Error
	return n > 0, wrap("has accounts", err)
}

// accountsForUser reads the accounts for which where holds (of a, the
// account, and m, its membership), by name, with the member's role in
// each. The account switcher and the agency overview list them all, an
// agency's hundreds too: they are scanned by hand (eachRow).
func (s *Store) accountsForUser(ctx context.Context, where string, args ...any) ([]models.AccountAccess, error) {
	var as []models.AccountAccess
	err := s.eachRow(ctx, `SELECT a.id, a.slug, a.name, a.timezone, a.default_country, a.currency, a.crm_name,
		a.website_url, a.junk_settings, a.created_at, a.updated_at, m.role
	FROM accounts a JOIN memberships m ON m.account_id = a.id
	WHERE `+where+`
	ORDER BY lower(a.name), a.id`, args, func(row rowScanner) error {
		var a models.AccountAccess
		if err := row.Scan(&a.ID, &a.Slug, &a.Name, &a.Timezone, &a.DefaultCountry, &a.Currency, &a.CRMName,
			&a.WebsiteURL, &a.JunkSettings, &a.CreatedAt, &a.UpdatedAt, &a.Role); err != nil {
			return err
		}
		as = append(as, a)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return as, nil
}

// UpdateAccountSettings saves an account's editable settings. The slug is
// the account's stable handle for scripts and is not changed here.
//
// A Website URL also becomes the event_source_url of the account's website
// leads that have none and an event not sent yet, as it would have at their
// capture: a retry of an event held back for the missing URL then sends it,
// and the lead page shows the URL sent. Only a changed Website URL does,
// and only to leads with an unsent event, so a save never rewrites an
// account's history of leads.
func (s *Store) UpdateAccountSettings(ctx context.Context, a models.Account) (models.Account, error) {
	defer s.forgetKeys()
	var out models.Account
	err := s.Tx(ctx, func(tx *Store) error {
		var before []models.Account
		if err := tx.q(ctx).Select("website_url, timezone").Where("id = ?", a.ID).Find(&before).Error; err != nil {
			return err
		}
		if len(before) == 0 {
			return ErrNotFound
		}
		res := tx.q(ctx).Model(&models.Account{}).Where("id = ?", a.ID).Updates(map[string]any{
			"name":            a.Name,
			"timezone":        a.Timezone,
			"default_country": a.DefaultCountry,
			"currency":        a.Currency,
			"crm_name":        a.CRMName,
			"website_url":     a.WebsiteURL,
		})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		if a.Timezone != before[0].Timezone {
			// The counts' merged rows are by date in the account's zone.
			if err := tx.RecountAccount(ctx, a.ID); err != nil {
				return err
			}
		}
		if a.WebsiteURL != "" && a.WebsiteURL != before[0].WebsiteURL {
			err := tx.q(ctx).Model(&models.Lead{}).
				Where(`account_id = ? AND source = ? AND event_source_url = '' AND id IN (
					SELECT lead_id FROM unsent_events WHERE dataset_id IN (SELECT id FROM datasets WHERE account_id = ?))`,
					a.ID, models.SourceWebsite, a.ID).
				Updates(map[string]any{"event_source_url": a.WebsiteURL, "updated_at": s.Now()}).Error
			if err != nil {
				return err
			}
		}
		return tx.q(ctx).Take(&out, a.ID).Error
	})
	if err != nil {
		return a, wrap("update account", err)
	}
	return out, nil
}

// Members lists an account's members by email.
func (s *Store) Members(ctx context.Context, accountID int64) ([]models.Member, error) {
	var ms []models.Member
	err := s.q(ctx).Table("memberships").
		Select("users.id AS user_id, users.email, memberships.role, memberships.created_at").
		Joins("JOIN users ON users.id = memberships.user_id").
		Where("memberships.account_id = ?", accountID).
		Order("users.email").
		Find(&ms).Error
	return ms, wrap("list members", err)
}

// SetMember adds a user to an account with a role, or changes the role of
// a member. It refuses to demote the last owner.
func (s *Store) SetMember(ctx context.Context, accountID, userID int64, role models.Role) error {
	err := s.Tx(ctx, func(tx *Store) error {
		var cur models.Membership
		err := tx.q(ctx).Where("account_id = ? AND user_id = ?", accountID, userID).Take(&cur).Error
		switch {
		case errors.Is(translate(err), ErrNotFound):
			return tx.q(ctx).Create(&models.Membership{AccountID: accountID, UserID: userID, Role: role}).Error
		case err != nil:
			return err
		}
		if cur.Role == models.RoleOwner && role != models.RoleOwner {
			if err := tx.ensureAnotherOwner(ctx, accountID, userID); err != nil {
				return err
			}
		}
		return tx.q(ctx).Model(&models.Membership{}).
			Where("account_id = ? AND user_id = ?", accountID, userID).
			Update("role", role).Error
	})
	return wrap("set member", err)
}

// RemoveMember takes a user out of an account and ends the user's
// sessions but the one hashed keep ("" for none: the owner removing
// themselves keeps theirs), so that a page left open on any replica stops
// working at once; it refuses to remove the last owner.
func (s *Store) RemoveMember(ctx context.Context, accountID, userID int64, keep string) error {
	err := s.Tx(ctx, func(tx *Store) error {
		var cur models.Membership
		if err := tx.q(ctx).Where("account_id = ? AND user_id = ?", accountID, userID).Take(&cur).Error; err != nil {
			return err
		}
		if cur.Role == models.RoleOwner {
			if err := tx.ensureAnotherOwner(ctx, accountID, userID); err != nil {
				return err
			}
		}
		if err := tx.q(ctx).Where("account_id = ? AND user_id = ?", accountID, userID).
			Delete(&models.Membership{}).Error; err != nil {
			return err
		}
		_, err := tx.DeleteUserSessions(ctx, userID, keep)
		return err
	})
	return wrap("remove member", err)
}

func (s *Store) ensureAnotherOwner(ctx context.Context, accountID, userID int64) error {
	q := s.q(ctx).Model(&models.Membership{}).
		Where("account_id = ? AND role = ? AND user_id <> ?", accountID, models.RoleOwner, userID)
	if s.dialect == "postgres" {
		// Lock the other owners' rows so two owners cannot demote each
		// other at the same time and leave none.
		q = q.Clauses(forUpdate())
	}
	var others []models.Membership
	if err := q.Find(&others).Error; err != nil {
		return err
	}
	if len(others) == 0 {
		return ErrLastOwner
	}
	return nil
}

// Account finds an account by id, for callers already authorised for it
// (an ingest key belongs to exactly one account).
func (s *Store) Account(ctx context.Context, id int64) (models.Account, error) {
	var a models.Account
	err := s.q(ctx).Take(&a, id).Error
	return a, wrap("account", err)
}

// UpdateJunkSettings saves an account's junk settings (JSON).
func (s *Store) UpdateJunkSettings(ctx context.Context, accountID int64, settings string) error {
	defer s.forgetKeys()
	res := s.q(ctx).Model(&models.Account{}).Where("id = ?", accountID).
		Updates(map[string]any{"junk_settings": settings, "updated_at": s.Now()})
	if res.Error == nil && res.RowsAffected == 0 {
		return wrap("update junk settings", ErrNotFound)
	}
	return wrap("update junk settings", res.Error)
}
