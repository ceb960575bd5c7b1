package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// ingestKeyPrefix starts every ingest key, so a leaked one is recognisable
// (secret scanners, logs) and cannot be mistaken for another credential.
const ingestKeyPrefix = "lsk_"

// HashIngestKey is the stored form of an ingest key secret.
func HashIngestKey(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// CreateIngestKey makes a new key for an account and returns it with its
// secret, which is not stored and cannot be shown again.
func (s *Store) CreateIngestKey(ctx context.Context, accountID int64, name string) (models.IngestKey, string, error) {
	secret := ingestKeyPrefix + strings.ToLower(rand.Text()+rand.Text())
	k := models.IngestKey{
		AccountID: accountID,
		Name:      name,
		Prefix:    secret[:len(ingestKeyPrefix)+6],
		KeyHash:   HashIngestKey(secret),
	}
	err := s.q(ctx).Create(&k).Error
	return k, secret, wrap("create ingest key", err)
}

// IngestKeys lists an account's keys, newest first, revoked ones included.
func (s *Store) IngestKeys(ctx context.Context, accountID int64) ([]models.IngestKey, error) {
	var ks []models.IngestKey
	err := s.q(ctx).Where("account_id = ?", accountID).Order("created_at DESC, id DESC").Find(&ks).Error
	return ks, wrap("list ingest keys", err)
}

// RevokeIngestKey stops a key from working. Revoking twice is harmless.
func (s *Store) RevokeIngestKey(ctx context.Context, accountID, keyID int64, now time.Time) error {
	defer s.forgetKeys()
	res := s.q(ctx).Model(&models.IngestKey{}).
		Where("account_id = ? AND id = ?", accountID, keyID).
		Update("revoked_at", gormExpr("COALESCE(revoked_at, ?)", now.UTC()))
	if res.Error == nil && res.RowsAffected == 0 {
		return wrap("revoke ingest key", ErrNotFound)
	}
	return wrap("revoke ingest key", res.Error)
}

// keyUseEvery is how often a key's use is written at most: a key that posts
// every second costs one write a minute.
const keyUseEvery = time.Minute

// NoteIngestKeyUse notes that the account's live key keyID posted at now,
// unless a use less than keyUseEvery before is noted already: for each
// call with the key (IngestKeyAccount), and for what captures as a key's
// holder would without HTTP (the demo).
func (s *Store) NoteIngestKeyUse(ctx context.Context, accountID, keyID int64, now time.Time) error {
	err := s.q(ctx).Model(&models.IngestKey{}).
		Where("account_id = ? AND id = ? AND revoked_at IS NULL AND (last_used_at IS NULL OR last_used_at <= ?)",
			accountID, keyID, now.Add(-keyUseEvery).UTC()).
		UpdateColumn("last_used_at", now.UTC()).Error
	return wrap("note ingest key use", err)
}

// keyAccount is an ingest key joined with its account.
type keyAccount struct {
	KeyID         int64
	KeyLastUsedAt *time.Time
	models.Account
}

// IngestKeyAccount finds the live key with this secret (its id) and its
// account in one query; ErrNotFound when the key is unknown or revoked. A key found is
// remembered for keyCacheTTL. It notes the key's use at most once a minute.
func (s *Store) IngestKeyAccount(ctx context.Context, secret string, now time.Time) (models.Account, int64, error) {
	hash := HashIngestKey(secret)
	ka, gen, ok := s.keys.get(hash, now)
	if !ok {
		err := s.q(ctx).Raw(`SELECT k.id AS key_id, k.last_used_at AS key_last_used_at, a.*
		FROM ingest_keys k JOIN accounts a ON a.id = k.account_id
		WHERE k.key_hash = ? AND k.revoked_at IS NULL`, hash).Scan(&ka).Error
		if err != nil {
			return models.Account{}, 0, wrap("ingest key", err)
		}
		if ka.KeyID == 0 {
			return models.Account{}, 0, wrap("ingest key", ErrNotFound)
		}
		s.keys.put(hash, ka, gen, now)
	}
	if ka.KeyLastUsedAt == nil || now.Sub(*ka.KeyLastUsedAt) > keyUseEvery {
		if err := s.NoteIngestKeyUse(ctx, ka.Account.ID, ka.KeyID, now); err != nil {
			return models.Account{}, 0, err
		}
		at := now.UTC()
		s.keys.update(hash, func(ka *keyAccount) { ka.KeyLastUsedAt = &at })
	}
	return ka.Account, ka.KeyID, nil
}
