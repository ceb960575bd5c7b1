package store

import (
	"context"
	"database/sql/driver"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// This file holds the set-at-a-time queries of batched lead capture: many
// leads in one transaction take a few statements, not a few per lead.

// LeadsByExternalIDs finds an account's leads by the callers' ids.
func (s *Store) LeadsByExternalIDs(ctx context.Context, accountID int64, ids []string) (map[string]models.Lead, error) {
	out := map[string]models.Lead{}
	if len(ids) == 0 {
		return out, nil
	}
	var ls []models.Lead
	if err := s.q(ctx).Where("account_id = ? AND external_id "+s.anyOf(), accountID, s.list(ids)).Find(&ls).Error; err != nil {
		return nil, wrap("leads by external ids", err)
	}
	for _, l := range ls {
		out[*l.ExternalID] = l
	}
	return out, nil
}

// Contact is when a complete lead with these hashes was captured.
type Contact struct {
	EmailHash string
	PhoneHash string
	CreatedAt time.Time
}

// RecentContacts lists the complete leads of an account captured since the
// given time whose email or phone hash is one of those given. The time is
// applied to the rows found, not in the query: a prepared statement's
// generic plan would otherwise scan the account's whole window by date.
func (s *Store) RecentContacts(ctx context.Context, accountID int64, emailHashes, phoneHashes []string, since time.Time) ([]Contact, error) {
	if len(emailHashes) == 0 && len(phoneHashes) == 0 {
		return nil, nil
	}
	// An empty list would be "IN (NULL)": harmless, but say it plainly.
	if len(emailHashes) == 0 {
		emailHashes = []string{"x"}
	}
	if len(phoneHashes) == 0 {
		phoneHashes = []string{"x"}
	}
	var cs []Contact
	var err error
	if s.dialect == "postgres" {
		// One index lookup per hash. The plain "email_hash = ANY(array)" let
		// a generic plan, made while the table was small, scan every lead of
		// the account; an equality per hash has no such plan.
		err = s.q(ctx).Raw(`
SELECT l.email_hash, l.phone_hash, l.created_at FROM unnest(CAST(? AS text[])) AS h(hash)
CROSS JOIN LATERAL (SELECT email_hash, phone_hash, created_at FROM leads
	WHERE account_id = ? AND email_hash = h.hash AND partial = ?) l
UNION ALL
SELECT l.email_hash, l.phone_hash, l.created_at FROM unnest(CAST(? AS text[])) AS h(hash)
CROSS JOIN LATERAL (SELECT email_hash, phone_hash, created_at FROM leads
	WHERE account_id = ? AND phone_hash = h.hash AND partial = ?) l`,
			textArray(emailHashes), accountID, false, textArray(phoneHashes), accountID, false).Scan(&cs).Error
	} else {
		err = s.q(ctx).Raw(`
SELECT email_hash, phone_hash, created_at FROM leads
WHERE account_id = ? AND email_hash IN ? AND partial = ?
UNION ALL
SELECT email_hash, phone_hash, created_at FROM leads
WHERE account_id = ? AND phone_hash IN ? AND partial = ?`,
			accountID, emailHashes, false, accountID, phoneHashes, false).Scan(&cs).Error
	}
	if err != nil {
		return nil, wrap("recent contacts", err)
	}
	recent := cs[:0]
	for _, c := range cs {
		if !c.CreatedAt.Before(since) {
			recent = append(recent, c)
		}
	}
	return recent, nil
}

// InsertLeads stores new leads with multi-row inserts and sets their ids.
// Any conflict (an external_id taken meanwhile) fails the whole call.
func (s *Store) InsertLeads(ctx context.Context, ls []models.Lead) error {
	if len(ls) == 0 {
		return nil
	}
	return wrap("insert leads", s.q(ctx).CreateInBatches(&ls, 200).Error)
}

// InsertEvents stores new events with multi-row inserts. Unlike
// EnqueueEvents it does not tolerate an existing (dataset, event_id): it is
// for events of leads created in the same transaction.
func (s *Store) InsertEvents(ctx context.Context, evs []models.Event) error {
	if len(evs) == 0 {
		return nil
	}
	now := time.Now().UTC()
	for i := range evs {
		if evs[i].Status == "" {
			evs[i].Status = models.EventQueued
		}
		if evs[i].NextAttemptAt.IsZero() {
			evs[i].NextAttemptAt = now
		}
	}
	return wrap("insert events", s.q(ctx).CreateInBatches(&evs, 500).Error)
}

// keyAccount is an ingest key joined with its account.
type keyAccount struct {
	KeyID         int64
	KeyLastUsedAt *time.Time
	models.Account
}

// IngestKeyAccount finds the live key with this secret and its account in
// one query; ErrNotFound when the key is unknown or revoked. A key found is
// remembered for keyCacheTTL. It notes the key's use at most once a minute.
func (s *Store) IngestKeyAccount(ctx context.Context, secret string, now time.Time) (models.Account, error) {
	hash := HashIngestKey(secret)
	ka, ok := s.keys.get(hash, now)
	if !ok {
		err := s.q(ctx).Raw(`SELECT k.id AS key_id, k.last_used_at AS key_last_used_at, a.*
		FROM ingest_keys k JOIN accounts a ON a.id = k.account_id
		WHERE k.key_hash = ? AND k.revoked_at IS NULL`, hash).Scan(&ka).Error
		if err != nil {
			return models.Account{}, wrap("ingest key", err)
		}
		if ka.KeyID == 0 {
			return models.Account{}, wrap("ingest key", ErrNotFound)
		}
		s.keys.put(hash, ka, now)
	}
	if ka.KeyLastUsedAt == nil || now.Sub(*ka.KeyLastUsedAt) > time.Minute {
		if err := s.q(ctx).Model(&models.IngestKey{}).Where("id = ?", ka.KeyID).
			UpdateColumn("last_used_at", now.UTC()).Error; err != nil {
			return models.Account{}, wrap("note ingest key use", err)
		}
		s.keys.used(hash, now.UTC())
	}
	return ka.Account, nil
}

// anyOf and list write "column matches one of these strings". On Postgres
// the list is one array parameter, so the statement text is the same for
// any number of values and its prepared plan is reused; SQLite has no
// arrays and gets an IN list.
func (s *Store) anyOf() string {
	if s.dialect == "postgres" {
		return "= ANY(CAST(? AS text[]))"
	}
	return "IN ?"
}

func (s *Store) list(vs []string) any {
	if s.dialect == "postgres" {
		return textArray(vs)
	}
	return vs
}

// textArray is a Postgres text[] parameter.
type textArray []string

// Value writes the array literal, every element quoted.
func (a textArray) Value() (driver.Value, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, v := range a {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String(), nil
}
