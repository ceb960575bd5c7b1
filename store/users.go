package store

import (
	"context"
	"errors"
	"strings"

	"github.com/leadsignal/leadsignal/models"
)

// ErrUsersExist means the first-admin setup was attempted after a user
// was already created.
var ErrUsersExist = errors.New("store: users already exist")

// CountUsers returns how many users there are.
func (s *Store) CountUsers(ctx context.Context) (int64, error) {
	var n int64
	err := s.q(ctx).Model(&models.User{}).Count(&n).Error
	return n, wrap("count users", err)
}

// CreateUser stores a new user; ErrConflict when the email is taken. An
// empty passwordHash makes a user who cannot log in until they set a
// password through a set-password link.
func (s *Store) CreateUser(ctx context.Context, email, passwordHash string, admin bool) (models.User, error) {
	u := models.User{Email: strings.ToLower(strings.TrimSpace(email)), PasswordHash: passwordHash, IsAdmin: admin}
	err := s.q(ctx).Create(&u).Error
	return u, wrap("create user", err)
}

// CreateFirstAdmin creates the first user, an admin, only while there are
// no users at all; ErrUsersExist otherwise. Two simultaneous setup forms
// cannot both win.
func (s *Store) CreateFirstAdmin(ctx context.Context, email, passwordHash string) (models.User, error) {
	var u models.User
	err := s.Tx(ctx, func(tx *Store) error {
		if tx.dialect == "postgres" {
			if err := tx.q(ctx).Exec(`LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE`).Error; err != nil {
				return err
			}
		}
		n, err := tx.CountUsers(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			return ErrUsersExist
		}
		u, err = tx.CreateUser(ctx, email, passwordHash, true)
		return err
	})
	return u, wrap("create first admin", err)
}

// UserByEmail finds a user by email, case-insensitively.
func (s *Store) UserByEmail(ctx context.Context, email string) (models.User, error) {
	var u models.User
	err := s.q(ctx).Where("lower(email) = ?", strings.ToLower(strings.TrimSpace(email))).Take(&u).Error
	return u, wrap("user by email", err)
}

// UserByID finds a user by id.
func (s *Store) UserByID(ctx context.Context, id int64) (models.User, error) {
	var u models.User
	err := s.q(ctx).Take(&u, id).Error
	return u, wrap("user by id", err)
}

// Users lists every user by email.
func (s *Store) Users(ctx context.Context) ([]models.User, error) {
	var us []models.User
	err := s.q(ctx).Order("email").Find(&us).Error
	return us, wrap("list users", err)
}

// SetUserPassword replaces a user's password hash, ends every session of
// the user and voids their set-password link: a password changed because it
// leaked must lock the thief out. The person who changed it is given a new
// session.
func (s *Store) SetUserPassword(ctx context.Context, id int64, passwordHash string) error {
	err := s.Tx(ctx, func(tx *Store) error {
		res := tx.q(ctx).Model(&models.User{}).Where("id = ?", id).Update("password_hash", passwordHash)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		if err := tx.q(ctx).Where("user_id = ?", id).Delete(&models.PasswordLink{}).Error; err != nil {
			return err
		}
		_, err := tx.DeleteUserSessions(ctx, id, "")
		return err
	})
	return wrap("set password", err)
}

// DeleteUser removes a user from the instance: their memberships and
// sessions go with them, and their name leaves the stage changes they made.
// It refuses (ErrLastOwner) while the user is the only owner of an account,
// which would leave it without anyone to manage it.
func (s *Store) DeleteUser(ctx context.Context, id int64) error {
	err := s.Tx(ctx, func(tx *Store) error {
		var owned []models.Membership
		if err := tx.q(ctx).Where("user_id = ? AND role = ?", id, models.RoleOwner).Find(&owned).Error; err != nil {
			return err
		}
		for _, m := range owned {
			if err := tx.ensureAnotherOwner(ctx, m.AccountID, id); err != nil {
				return err
			}
		}
		// The foreign keys cascade too; deleting the sessions here says so
		// in code, and does not rely on SQLite's foreign_keys pragma.
		if _, err := tx.DeleteUserSessions(ctx, id, ""); err != nil {
			return err
		}
		if err := tx.q(ctx).Where("user_id = ?", id).Delete(&models.PasswordLink{}).Error; err != nil {
			return err
		}
		res := tx.q(ctx).Delete(&models.User{}, id)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		return nil
	})
	return wrap("delete user", err)
}

// SetLastAccount remembers the account a user looked at last.
func (s *Store) SetLastAccount(ctx context.Context, userID, accountID int64) error {
	err := s.q(ctx).Model(&models.User{}).Where("id = ?", userID).
		UpdateColumn("last_account_id", accountID).Error
	return wrap("set last account", err)
}
