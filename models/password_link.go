package models

import "time"

// PasswordLink is a one-time link that lets a user without a password
// choose one and log in. TokenHash is the SHA-256 (hex) of the token the
// link carries; the token itself is never stored.
type PasswordLink struct {
	TokenHash string `gorm:"primaryKey"`
	UserID    int64
	// AccountID is the account the user was invited to, where the link
	// lands them; nil for an administrator's link.
	AccountID *int64
	CreatedAt time.Time
	ExpiresAt time.Time
}
