package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// PasswordLinkTTL is how long a set-password link works after it was made.
const PasswordLinkTTL = 7 * 24 * time.Hour

var (
	// ErrLinkExpired means a set-password link is older than PasswordLinkTTL.
	ErrLinkExpired = errors.New("store: link expired")
	// ErrAlreadyMember means the person invited is a member of the account
	// already.
	ErrAlreadyMember = errors.New("store: already a member")
	// ErrInvitedElsewhere means the person invited has no password yet and
	// a login that reaches beyond the account: a member of another account,
	// or an administrator. Whoever holds their set-password link logs in as
	// them, so no owner of one account may be handed it.
	ErrInvitedElsewhere = errors.New("store: invited elsewhere, no password yet")
)

// InviteMember adds the user with this email to an account with a role,
// creating the user, without a password, when nobody has the email. When
// the user is a member already it changes nothing and returns the user
// with ErrAlreadyMember. A user without a password who is an administrator
// or a member of another account is not added: ErrInvitedElsewhere.
func (s *Store) InviteMember(ctx context.Context, accountID int64, email string, role models.Role) (models.User, error) {
	var u models.User
	err := s.Tx(ctx, func(tx *Store) error {
		var err error
		u, err = tx.UserByEmail(ctx, email)
		if errors.Is(err, ErrNotFound) {
			u, err = tx.CreateUser(ctx, email, "", false)
		}
		if err != nil {
			return err
		}
		if u.PasswordHash == "" {
			var elsewhere int64
			if err := tx.q(ctx).Model(&models.Membership{}).Where("user_id = ? AND account_id <> ?", u.ID, accountID).Count(&elsewhere).Error; err != nil {
				return err
			}
			if u.IsAdmin || elsewhere > 0 {
				return ErrInvitedElsewhere
			}
		}
		var n int64
		if err := tx.q(ctx).Model(&models.Membership{}).Where("account_id = ? AND user_id = ?", accountID, u.ID).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return ErrAlreadyMember
		}
		return tx.SetMember(ctx, accountID, u.ID, role)
	})
	return u, wrap("invite member", err)
}

// CreatePasswordLink makes a set-password link for a user, voiding the
// user's earlier one, and returns its token. The token is not stored: it
// cannot be shown again.
func (s *Store) CreatePasswordLink(ctx context.Context, userID int64, accountID *int64, now time.Time) (string, error) {
	token := strings.ToLower(rand.Text() + rand.Text())
	err := s.Tx(ctx, func(tx *Store) error {
		if err := tx.q(ctx).Where("user_id = ?", userID).Delete(&models.PasswordLink{}).Error; err != nil {
			return err
		}
		return tx.q(ctx).Create(&models.PasswordLink{
			TokenHash: linkHash(token), UserID: userID, AccountID: accountID,
			CreatedAt: now.UTC(), ExpiresAt: now.Add(PasswordLinkTTL).UTC(),
		}).Error
	})
	return token, wrap("create password link", err)
}

// PasswordLink finds the link with this token and its user: ErrNotFound
// when the token is unknown or was used, ErrLinkExpired when it is too old
// at now.
func (s *Store) PasswordLink(ctx context.Context, token string, now time.Time) (models.PasswordLink, models.User, error) {
	var l models.PasswordLink
	if err := s.q(ctx).Where("token_hash = ?", linkHash(token)).Take(&l).Error; err != nil {
		return l, models.User{}, wrap("password link", err)
	}
	if !now.Before(l.ExpiresAt) {
		return l, models.User{}, wrap("password link", ErrLinkExpired)
	}
	u, err := s.UserByID(ctx, l.UserID)
	return l, u, wrap("password link", err)
}

// UsePasswordLink sets the password of the link's user and deletes the
// link, so it works once; the user's sessions end, as on every password
// change. Errors as PasswordLink; of two uses at once, one wins.
func (s *Store) UsePasswordLink(ctx context.Context, token, passwordHash string, now time.Time) (models.PasswordLink, models.User, error) {
	var l models.PasswordLink
	var u models.User
	err := s.Tx(ctx, func(tx *Store) error {
		var err error
		if l, u, err = tx.PasswordLink(ctx, token, now); err != nil {
			return err
		}
		res := tx.q(ctx).Where("token_hash = ?", l.TokenHash).Delete(&models.PasswordLink{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		u.PasswordHash = passwordHash
		return tx.SetUserPassword(ctx, u.ID, passwordHash)
	})
	return l, u, wrap("use password link", err)
}

// linkHash is the stored form of a link's token.
func linkHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// MembersWithoutPassword returns the ids of an account's members who have
// no password yet: invited, their link not used.
func (s *Store) MembersWithoutPassword(ctx context.Context, accountID int64) (map[int64]bool, error) {
	var ids []int64
	err := s.q(ctx).Table("memberships").Select("memberships.user_id").
		Joins("JOIN users ON users.id = memberships.user_id").
		Where("memberships.account_id = ? AND users.password_hash = ''", accountID).
		Scan(&ids).Error
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, wrap("members without password", err)
}
