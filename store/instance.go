package store

import (
	"context"
	"time"

	"gorm.io/gorm/clause"

	"github.com/leadsignal/leadsignal/models"
)

// InstanceSettings returns the instance's settings, the zero settings while
// none were saved. They are remembered for keyCacheTTL: every CRM delivery
// reads the public address (PublicURL).
func (s *Store) InstanceSettings(ctx context.Context) (models.InstanceSettings, error) {
	now := time.Now()
	v, gen, ok := s.instance.get("", now)
	if ok {
		return v, nil
	}
	var rows []models.InstanceSettings
	if err := s.q(ctx).Where("id = 1").Find(&rows).Error; err != nil {
		return v, wrap("instance settings", err)
	}
	if len(rows) == 1 {
		v = rows[0]
	}
	s.instance.put("", v, gen, now)
	return v, nil
}

// SavePublicURL saves the public address an administrator typed, as
// config.PublicURL checked and wrote it ("" clears it), by user by at now.
func (s *Store) SavePublicURL(ctx context.Context, publicURL string, by int64, now time.Time) error {
	defer s.forgetInstance()
	row := models.InstanceSettings{ID: 1, PublicURL: publicURL, UpdatedAt: now.UTC(), UpdatedBy: &by}
	err := s.q(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "id"}},
		DoUpdates: clause.AssignmentColumns([]string{"public_url", "updated_at", "updated_by"}),
	}).Create(&row).Error
	return wrap("save public url", err)
}

// PublicURL is the address hook URLs are made with, and HubSpot's
// signatures checked against: env (LEADSIGNAL_PUBLIC_URL) when it is set,
// which wins, else the one an administrator saved; "" when neither is.
func (s *Store) PublicURL(ctx context.Context, env string) (string, error) {
	if env != "" {
		return env, nil
	}
	v, err := s.InstanceSettings(ctx)
	return v.PublicURL, err
}

// forgetInstance clears the settings' cache once the change at hand is
// committed, as forgetKeys clears the keys'.
func (s *Store) forgetInstance() {
	if s.afterCommit != nil {
		*s.afterCommit = append(*s.afterCommit, s.instance.forget)
		return
	}
	s.instance.forget()
}
