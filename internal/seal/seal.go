// Package seal encrypts secrets at rest (Meta access tokens, app secrets)
// with AES-256-GCM under a key derived from LEADSIGNAL_SECRET.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
)

// version prefixes every sealed value, so the scheme can change later
// without guessing what an old value was.
const version = "v1:"

// Box seals and opens values with one key.
type Box struct {
	aead cipher.AEAD
}

// New returns a Box for a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("seal: key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plaintext; label binds the ciphertext to its use (for
// example "dataset:12:token"), so a value copied to another row or column
// does not open there.
func (b *Box) Seal(plaintext, label string) string {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	out := b.aead.Seal(nonce, nonce, []byte(plaintext), []byte(label))
	return version + base64.RawStdEncoding.EncodeToString(out)
}

// ErrOpen means a sealed value is corrupt, was sealed under another key
// (LEADSIGNAL_SECRET changed) or for another label.
var ErrOpen = errors.New("seal: cannot decrypt; was LEADSIGNAL_SECRET changed?")

// Open decrypts a value made by Seal with the same label.
func (b *Box) Open(sealed, label string) (string, error) {
	if len(sealed) < len(version) || sealed[:len(version)] != version {
		return "", ErrOpen
	}
	raw, err := base64.RawStdEncoding.DecodeString(sealed[len(version):])
	if err != nil || len(raw) < b.aead.NonceSize() {
		return "", ErrOpen
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], []byte(label))
	if err != nil {
		return "", ErrOpen
	}
	return string(plain), nil
}
