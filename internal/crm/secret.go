package crm

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"unicode/utf8"
)

// MinSecret is the fewest characters a connection's secret typed by a
// person (on its form or in the setup file's variable) may have: a
// shorter one can be guessed (docs/crm.md, "Limits").
const MinSecret = 16

// SecretTooShort says what is wrong with a typed secret shorter than
// MinSecret, without repeating it; "" when it is long enough.
func SecretTooShort(secret string) string {
	if n := utf8.RuneCountInString(secret); n < MinSecret {
		return fmt.Sprintf("a secret has at least %d characters (this one has %d): a shorter one can be guessed", MinSecret, n)
	}
	return ""
}

// NewSecret is a generated secret: 32 random bytes, in hex.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}
