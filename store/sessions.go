package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/leadsignal/leadsignal/models"
)

// SessionLimits are how long a session lives: Idle after its last request,
// Absolute after it began, whichever ends first.
type SessionLimits struct {
	Idle     time.Duration
	Absolute time.Duration
}

// live narrows q to the sessions still usable at now. Times are kept in
// UTC: SQLite compares them as text.
func live(q *gorm.DB, now time.Time, lim SessionLimits) *gorm.DB {
	return q.Where("last_seen_at > ? AND created_at > ?", now.Add(-lim.Idle).UTC(), now.Add(-lim.Absolute).UTC())
}

// Session finds a live session by the hash of its id: ErrNotFound when
// there is none, or when it has been idle or alive too long at now.
func (s *Store) Session(ctx context.Context, idHash string, now time.Time, lim SessionLimits) (models.Session, error) {
	var sess models.Session
	err := live(s.q(ctx).Where("id_hash = ?", idHash), now, lim).Take(&sess).Error
	return sess, wrap("session", err)
}

// CountUserSessions counts a user's live sessions at now.
func (s *Store) CountUserSessions(ctx context.Context, userID int64, now time.Time, lim SessionLimits) (int64, error) {
	var n int64
	err := live(s.q(ctx).Model(&models.Session{}).Where("user_id = ?", userID), now, lim).Count(&n).Error
	return n, wrap("count user sessions", err)
}

// CreateSession stores a new session.
func (s *Store) CreateSession(ctx context.Context, sess models.Session) error {
	sess.CreatedAt, sess.LastSeenAt = sess.CreatedAt.UTC(), sess.LastSeenAt.UTC()
	return wrap("create session", s.q(ctx).Create(&sess).Error)
}

// UpdateSession replaces a session's user, values and last-seen time. It
// never brings back a session that was ended meanwhile (a logout on another
// tab, a removal): then it returns ErrNotFound.
func (s *Store) UpdateSession(ctx context.Context, sess models.Session) error {
	res := s.q(ctx).Model(&models.Session{}).Where("id_hash = ?", sess.IDHash).
		Updates(map[string]any{"user_id": sess.UserID, "data": sess.Data, "last_seen_at": sess.LastSeenAt.UTC()})
	if res.Error == nil && res.RowsAffected == 0 {
		return wrap("update session", ErrNotFound)
	}
	return wrap("update session", res.Error)
}

// TouchSession records a request on a session, for the idle limit.
func (s *Store) TouchSession(ctx context.Context, idHash string, now time.Time) error {
	err := s.q(ctx).Model(&models.Session{}).Where("id_hash = ?", idHash).
		UpdateColumn("last_seen_at", now.UTC()).Error
	return wrap("touch session", err)
}

// DeleteSession ends one session.
func (s *Store) DeleteSession(ctx context.Context, idHash string) error {
	err := s.q(ctx).Where("id_hash = ?", idHash).Delete(&models.Session{}).Error
	return wrap("delete session", err)
}

// DeleteUserSessions ends every session of a user but the one whose hash
// is keep ("" keeps none), and returns how many it ended.
func (s *Store) DeleteUserSessions(ctx context.Context, userID int64, keep string) (int64, error) {
	res := s.q(ctx).Where("user_id = ? AND id_hash <> ?", userID, keep).Delete(&models.Session{})
	return res.RowsAffected, wrap("delete user sessions", res.Error)
}

// DeleteExpiredSessions removes the sessions that can no longer be used at
// now, and returns how many.
func (s *Store) DeleteExpiredSessions(ctx context.Context, now time.Time, lim SessionLimits) (int64, error) {
	// The opposite of live.
	res := s.q(ctx).Where("last_seen_at <= ? OR created_at <= ?", now.Add(-lim.Idle).UTC(), now.Add(-lim.Absolute).UTC()).
		Delete(&models.Session{})
	return res.RowsAffected, wrap("delete expired sessions", res.Error)
}
