package store

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/leadsignal/leadsignal/models"
)

// MaxCRMConnections is the most CRM connections an account may have.
const MaxCRMConnections = 20

// ErrCRMConnectionLimit means the account has MaxCRMConnections already.
var ErrCRMConnectionLimit = errors.New("store: the account has the most CRM connections it may have")

// NewCRMToken is a new unguessable hook token: 52 base32 characters, 260
// random bits.
func NewCRMToken() string { return strings.ToLower(rand.Text() + rand.Text()) }

// CreateCRMConnection stores a new connection, with a new token unless it
// has one; ErrConflict when the account has one of this kind and name,
// ErrCRMConnectionLimit when it has the most it may.
func (s *Store) CreateCRMConnection(ctx context.Context, c *models.CRMConnection) error {
	if c.Token == "" {
		c.Token = NewCRMToken()
	}
	if c.Fields == "" {
		c.Fields = "{}"
	}
	return wrap("create crm connection", s.Tx(ctx, func(tx *Store) error {
		var n int64
		if err := tx.q(ctx).Model(&models.CRMConnection{}).Where("account_id = ?", c.AccountID).Count(&n).Error; err != nil {
			return err
		}
		if n >= MaxCRMConnections {
			return ErrCRMConnectionLimit
		}
		if taken, err := tx.crmNameTaken(ctx, *c); err != nil || taken {
			if err == nil {
				err = ErrConflict
			}
			return err
		}
		return tx.q(ctx).Create(c).Error
	}))
}

func (s *Store) crmNameTaken(ctx context.Context, c models.CRMConnection) (bool, error) {
	var n int64
	err := s.q(ctx).Model(&models.CRMConnection{}).
		Where("account_id = ? AND kind = ? AND lower(name) = lower(?) AND id <> ?", c.AccountID, c.Kind, c.Name, c.ID).
		Count(&n).Error
	return n > 0, err
}

// SaveCRMConnection writes a connection's name, secrets, lead id property
// and mapping; its kind and token never change. ErrConflict when another
// of the account's connections of its kind has the name.
func (s *Store) SaveCRMConnection(ctx context.Context, c *models.CRMConnection) error {
	defer s.forgetHooks()
	return wrap("save crm connection", s.Tx(ctx, func(tx *Store) error {
		if taken, err := tx.crmNameTaken(ctx, *c); err != nil || taken {
			if err == nil {
				err = ErrConflict
			}
			return err
		}
		res := tx.q(ctx).Model(c).Where("account_id = ?", c.AccountID).
			Select("name", "secret_sealed", "secret_env", "api_token_sealed", "api_token_env", "lead_id_property", "fields", "updated_at").
			Updates(c)
		if res.Error == nil && res.RowsAffected == 0 {
			return ErrNotFound
		}
		if res.Error != nil {
			return res.Error
		}
		// A new field mapping, lead id property or token may be what its
		// waiting deliveries need, those needing attention too: they are
		// due again at once (their arrival is a time already past on every
		// clock).
		return tx.q(ctx).Model(&models.CRMDelivery{}).
			Where("account_id = ? AND connection_id = ? AND status = ? AND waiting_for IN ?", c.AccountID, c.ID, models.DeliveryWaiting,
				[]string{models.WaitingMapping, models.WaitingCRM, models.WaitingLead, models.WaitingAttention}).
			Update("next_try_at", gorm.Expr("received_at")).Error
	}))
}

// DeleteCRMConnection deletes a connection with its stage table and
// deliveries: its URL answers 404 from then on.
func (s *Store) DeleteCRMConnection(ctx context.Context, accountID, id int64) error {
	defer s.forgetHooks()
	res := s.q(ctx).Where("account_id = ? AND id = ?", accountID, id).Delete(&models.CRMConnection{})
	if res.Error == nil && res.RowsAffected == 0 {
		return wrap("delete crm connection", ErrNotFound)
	}
	return wrap("delete crm connection", res.Error)
}

// CRMConnections lists an account's connections by kind and name.
func (s *Store) CRMConnections(ctx context.Context, accountID int64) ([]models.CRMConnection, error) {
	var cs []models.CRMConnection
	err := s.q(ctx).Where("account_id = ?", accountID).Order("kind, lower(name), id").Find(&cs).Error
	return cs, wrap("list crm connections", err)
}

// CRMConnection finds one of an account's connections.
func (s *Store) CRMConnection(ctx context.Context, accountID, id int64) (models.CRMConnection, error) {
	var c models.CRMConnection
	err := s.q(ctx).Where("account_id = ? AND id = ?", accountID, id).Take(&c).Error
	return c, wrap("crm connection", err)
}

// CRMConnectionByToken finds the connection a hook URL names, of any
// account: the token is the URL's own secret part. A connection found is
// remembered for keyCacheTTL: a CRM posts in bursts. Saving or deleting a
// connection clears this replica's cache; another replica may take a
// deleted connection's delivery for a few seconds more, and then its
// insert finds no connection (ErrNotFound).
func (s *Store) CRMConnectionByToken(ctx context.Context, kind, token string) (models.CRMConnection, error) {
	k, now := kind+"/"+token, time.Now()
	c, gen, ok := s.hooks.get(k, now)
	if ok {
		return c, nil
	}
	if err := s.q(ctx).Where("token = ? AND kind = ?", token, kind).Take(&c).Error; err != nil {
		return c, wrap("crm connection by token", err)
	}
	s.hooks.put(k, c, gen, now)
	return c, nil
}

// CRMConnectionByID finds a connection for the worker, which works across
// accounts.
func (s *Store) CRMConnectionByID(ctx context.Context, id int64) (models.CRMConnection, error) {
	var c models.CRMConnection
	err := s.q(ctx).Take(&c, id).Error
	return c, wrap("crm connection by id", err)
}

// CRMStages is a connection's stage table, by pipeline and position, the
// stages seen in deliveries but never listed last.
func (s *Store) CRMStages(ctx context.Context, accountID, connectionID int64) ([]models.CRMStage, error) {
	var ss []models.CRMStage
	err := s.q(ctx).Where("account_id = ? AND connection_id = ?", accountID, connectionID).
		Order("CASE WHEN label = '' THEN 1 ELSE 0 END, pipeline, position, crm_stage_id").Find(&ss).Error
	return ss, wrap("crm stages", err)
}

// ListCRMStages records the stages a CRM's pipelines API lists: their
// labels, pipelines and positions. A stage's mapping is kept.
func (s *Store) ListCRMStages(ctx context.Context, accountID, connectionID int64, listed []models.CRMStage) error {
	if len(listed) == 0 {
		return nil
	}
	rows := make([]models.CRMStage, len(listed))
	for i, st := range listed {
		st.AccountID, st.ConnectionID = accountID, connectionID
		rows[i] = st
	}
	err := s.q(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "connection_id"}, {Name: "crm_stage_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"label", "pipeline", "position"}),
	}).Omit("stage", "seen_at").CreateInBatches(&rows, 200).Error
	return wrap("list crm stages", err)
}

// MapCRMStages sets the account stage of each CRM stage id in stages ("" to
// unmap), adding ids not in the table, and wakes the connection's
// deliveries that wait for a mapping.
func (s *Store) MapCRMStages(ctx context.Context, accountID, connectionID int64, stages map[string]string, now time.Time) error {
	return wrap("map crm stages", s.Tx(ctx, func(tx *Store) error {
		for id, stage := range stages {
			row := models.CRMStage{ConnectionID: connectionID, AccountID: accountID, CRMStageID: id, Stage: stage}
			err := tx.q(ctx).Clauses(clause.OnConflict{
				Columns:   []clause.Column{{Name: "connection_id"}, {Name: "crm_stage_id"}},
				DoUpdates: clause.AssignmentColumns([]string{"stage"}),
			}).Omit("seen_at").Create(&row).Error
			if err != nil {
				return err
			}
		}
		return tx.q(ctx).Model(&models.CRMDelivery{}).
			Where("account_id = ? AND connection_id = ? AND status = ? AND waiting_for = ?", accountID, connectionID, models.DeliveryWaiting, models.WaitingMapping).
			Update("next_try_at", now.UTC()).Error
	}))
}

// SeeCRMStage notes that a delivery carried a CRM stage id, adding it to
// the connection's table (unmapped) when it is not there.
func (s *Store) SeeCRMStage(ctx context.Context, accountID, connectionID int64, crmStageID string, at time.Time) error {
	at = at.UTC()
	row := models.CRMStage{ConnectionID: connectionID, AccountID: accountID, CRMStageID: crmStageID, SeenAt: &at}
	err := s.q(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "connection_id"}, {Name: "crm_stage_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"seen_at"}),
	}).Create(&row).Error
	return wrap("see crm stage", err)
}
