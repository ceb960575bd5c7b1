package store

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/leadsignal/leadsignal/internal/site"
	"github.com/leadsignal/leadsignal/models"
)

// ErrSiteKeyOrigins is an origin added to a site key that has
// site.MaxOrigins already.
var ErrSiteKeyOrigins = errors.New("store: the site key has the most origins it may have")

// MaxSiteKeys bounds an account's live site keys.
const MaxSiteKeys = 20

// ErrSiteKeyLimit is a site key made for an account that has MaxSiteKeys
// live ones.
var ErrSiteKeyLimit = errors.New("store: the account has the most site keys it may have")

// CreateSiteKey makes a new site key for an account, allowed from origins
// (site.ParseOrigin's, without repeats).
func (s *Store) CreateSiteKey(ctx context.Context, accountID int64, name string, origins []string, now time.Time) (models.SiteKey, error) {
	k := models.SiteKey{AccountID: accountID, Name: name, Key: site.NewKey(), CreatedAt: now.UTC()}
	if len(origins) > site.MaxOrigins {
		return k, wrap("create site key", ErrSiteKeyOrigins)
	}
	defer s.forgetKeys()
	err := s.Tx(ctx, func(tx *Store) error {
		var n int64
		if err := tx.q(ctx).Model(&models.SiteKey{}).Where("account_id = ? AND revoked_at IS NULL", accountID).Count(&n).Error; err != nil {
			return err
		}
		if n >= MaxSiteKeys {
			return ErrSiteKeyLimit
		}
		if err := tx.q(ctx).Create(&k).Error; err != nil {
			return err
		}
		for _, o := range origins {
			so := models.SiteKeyOrigin{SiteKeyID: k.ID, Origin: o, CreatedAt: now.UTC()}
			if err := tx.q(ctx).Create(&so).Error; err != nil {
				return err
			}
			k.Origins = append(k.Origins, so)
		}
		return nil
	})
	return k, wrap("create site key", err)
}

// SiteKeys lists an account's site keys with their origins, newest first,
// revoked ones included.
func (s *Store) SiteKeys(ctx context.Context, accountID int64) ([]models.SiteKey, error) {
	var ks []models.SiteKey
	if err := s.q(ctx).Where("account_id = ?", accountID).Order("created_at DESC, id DESC").Find(&ks).Error; err != nil {
		return nil, wrap("site keys", err)
	}
	return ks, wrap("site keys", s.loadOrigins(ctx, ks))
}

// SiteKey finds one of an account's site keys, with its origins.
func (s *Store) SiteKey(ctx context.Context, accountID, id int64) (models.SiteKey, error) {
	var k models.SiteKey
	if err := s.q(ctx).Where("account_id = ? AND id = ?", accountID, id).Take(&k).Error; err != nil {
		return k, wrap("site key", err)
	}
	ks := []models.SiteKey{k}
	err := s.loadOrigins(ctx, ks)
	return ks[0], wrap("site key", err)
}

func (s *Store) loadOrigins(ctx context.Context, ks []models.SiteKey) error {
	if len(ks) == 0 {
		return nil
	}
	ids := make([]int64, len(ks))
	at := make(map[int64]int, len(ks))
	for i, k := range ks {
		ids[i], at[k.ID] = k.ID, i
	}
	var os []models.SiteKeyOrigin
	if err := s.q(ctx).Where("site_key_id IN ?", ids).Order("created_at, origin").Find(&os).Error; err != nil {
		return err
	}
	for _, o := range os {
		k := &ks[at[o.SiteKeyID]]
		k.Origins = append(k.Origins, o)
	}
	return nil
}

// RevokeSiteKey stops a site key from working. Revoking twice is harmless.
func (s *Store) RevokeSiteKey(ctx context.Context, accountID, id int64, now time.Time) error {
	defer s.forgetKeys()
	res := s.q(ctx).Model(&models.SiteKey{}).Where("account_id = ? AND id = ?", accountID, id).
		Update("revoked_at", gormExpr("COALESCE(revoked_at, ?)", now.UTC()))
	if res.Error == nil && res.RowsAffected == 0 {
		return wrap("revoke site key", ErrNotFound)
	}
	return wrap("revoke site key", res.Error)
}

// AddSiteKeyOrigin allows one of an account's live site keys from origin
// (site.ParseOrigin's). ErrConflict when it is allowed already,
// ErrSiteKeyOrigins when the key has the most origins it may.
func (s *Store) AddSiteKeyOrigin(ctx context.Context, accountID, id int64, origin string, now time.Time) error {
	defer s.forgetKeys()
	return wrap("add site key origin", s.Tx(ctx, func(tx *Store) error {
		k, err := tx.SiteKey(ctx, accountID, id)
		if err != nil {
			return err
		}
		if k.RevokedAt != nil {
			return ErrNotFound
		}
		for _, o := range k.Origins {
			if o.Origin == origin {
				return ErrConflict
			}
		}
		if len(k.Origins) >= site.MaxOrigins {
			return ErrSiteKeyOrigins
		}
		return tx.q(ctx).Create(&models.SiteKeyOrigin{SiteKeyID: k.ID, Origin: origin, CreatedAt: now.UTC()}).Error
	}))
}

// RemoveSiteKeyOrigin stops one of an account's site keys from working
// from origin; ErrNotFound when it was not allowed from it.
func (s *Store) RemoveSiteKeyOrigin(ctx context.Context, accountID, id int64, origin string) error {
	defer s.forgetKeys()
	res := s.q(ctx).Where("origin = ? AND site_key_id IN (?)", origin,
		s.q(ctx).Model(&models.SiteKey{}).Select("id").Where("account_id = ? AND id = ?", accountID, id)).
		Delete(&models.SiteKeyOrigin{})
	if res.Error == nil && res.RowsAffected == 0 {
		return wrap("remove site key origin", ErrNotFound)
	}
	return wrap("remove site key origin", res.Error)
}

// siteKeyAccount is a live site key, with its origins, and its account,
// as the sites cache holds them.
type siteKeyAccount struct {
	account models.Account
	key     models.SiteKey
}

// SiteKeyAccount finds the live site key key, with its origins, and its
// account; ErrNotFound when it is unknown or revoked. A key found is
// remembered for keyCacheTTL; every change of site keys or accounts this
// replica commits clears what it remembers.
func (s *Store) SiteKeyAccount(ctx context.Context, key string) (models.Account, models.SiteKey, error) {
	if !site.LooksLikeKey(key) {
		return models.Account{}, models.SiteKey{}, wrap("site key", ErrNotFound)
	}
	now := time.Now()
	sa, gen, ok := s.sites.get(key, now)
	if ok {
		return sa.account, sa.key, nil
	}
	if err := s.q(ctx).Where("key = ? AND revoked_at IS NULL", key).Take(&sa.key).Error; err != nil {
		return sa.account, sa.key, wrap("site key", err)
	}
	if err := s.q(ctx).Where("id = ?", sa.key.AccountID).Take(&sa.account).Error; err != nil {
		return sa.account, sa.key, wrap("site key account", err)
	}
	ks := []models.SiteKey{sa.key}
	if err := s.loadOrigins(ctx, ks); err != nil {
		return sa.account, sa.key, wrap("site key", err)
	}
	sa.key = ks[0]
	s.sites.put(key, sa, gen, now)
	return sa.account, sa.key, nil
}

// originSeenEvery is how often an origin's last use is written at most.
const originSeenEvery = time.Minute

// NoteSiteKeyOrigin notes that a page of origin posted with the site key
// k (as SiteKeyAccount found it) at now, unless a post less than a minute
// before is noted already.
func (s *Store) NoteSiteKeyOrigin(ctx context.Context, k models.SiteKey, origin string, now time.Time) error {
	for _, o := range k.Origins {
		if o.Origin == origin && o.LastSeenAt != nil && now.Sub(*o.LastSeenAt) < originSeenEvery {
			return nil
		}
	}
	err := s.q(ctx).Model(&models.SiteKeyOrigin{}).
		Where("site_key_id = ? AND origin = ? AND (last_seen_at IS NULL OR last_seen_at <= ?)", k.ID, origin, now.Add(-originSeenEvery).UTC()).
		UpdateColumn("last_seen_at", now.UTC()).Error
	if err != nil {
		return wrap("note site key origin", err)
	}
	at := now.UTC()
	s.sites.update(k.Key, func(sa *siteKeyAccount) {
		sa.key.Origins = slices.Clone(sa.key.Origins)
		for i := range sa.key.Origins {
			if sa.key.Origins[i].Origin == origin {
				sa.key.Origins[i].LastSeenAt = &at
			}
		}
	})
	return nil
}

// SnippetLeads are an account's newest leads, at most limit, captured
// since since by the site snippet: their external_id is the snippet's
// form session id (ls_...). The install page shows them arrive.
func (s *Store) SnippetLeads(ctx context.Context, accountID int64, since time.Time, limit int) ([]models.Lead, error) {
	var ls []models.Lead
	err := s.q(ctx).Where("account_id = ? AND created_at >= ? AND external_id >= 'ls_' AND external_id < 'ls`'", accountID, since.UTC()).
		Order("created_at DESC, id DESC").Limit(limit).Find(&ls).Error
	return ls, wrap("snippet leads", err)
}
