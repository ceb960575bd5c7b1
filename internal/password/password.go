// Package password hashes and checks login passwords with bcrypt.
package password

import (
	"errors"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// MinLength and MaxBytes bound a password: bcrypt ignores bytes past 72,
// so longer passwords are refused rather than silently cut.
const (
	MinLength = 10
	MaxBytes  = 72
)

// Validate says why a new password is not acceptable, or nil.
func Validate(pw string) error {
	switch {
	case utf8.RuneCountInString(pw) < MinLength:
		return errors.New("use at least 10 characters")
	case len(pw) > MaxBytes:
		return errors.New("use at most 72 bytes")
	}
	return nil
}

// Hash returns the bcrypt hash of a valid password.
func Hash(pw string) (string, error) {
	if err := Validate(pw); err != nil {
		return "", err
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
	return string(h), err
}

// dummy is compared against when the email is unknown, so that a login
// for a missing user costs as much time as one for a real user.
var dummy, _ = bcrypt.GenerateFromPassword([]byte("leadsignal-timing-equaliser"), bcrypt.DefaultCost)

// Check reports whether pw matches hash. An empty hash still spends a
// bcrypt comparison, so callers need not branch on unknown users.
func Check(hash, pw string) bool {
	if hash == "" {
		_ = bcrypt.CompareHashAndPassword(dummy, []byte(pw))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}
