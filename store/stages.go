package store

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// TemplateStages are the stages a new account starts with, in order;
// booked is its booking stage.
var TemplateStages = []models.Stage{
	{Name: models.StageQualified, Position: 1},
	{Name: models.StageBooked, Position: 2, Booking: true},
	{Name: models.StageWon, Position: 3},
}

// TemplateMappings are the stage mappings the Stages page offers an
// account without any, on dataset d: qualified sends QualifiedLead, booked
// Schedule, and won a Purchase with the deal's value, taken from the stage
// change (the currency too, else the account's). They are enabled, have no
// conditions and send once per lead.
func TemplateMappings(d models.Dataset) []models.SendRule {
	m := func(stage, event string) models.SendRule {
		r := models.SendRule{AccountID: d.AccountID, DatasetID: d.ID, Mode: modeStage, Stage: stage, EventName: event,
			Combinator: "and", Conditions: "[]", Enabled: true}
		r.Name = fitName(stage+" to "+event, "")
		return r
	}
	won := m(models.StageWon, "Purchase")
	won.ValueField = models.StageValueFromChange
	return []models.SendRule{m(models.StageQualified, "QualifiedLead"), m(models.StageBooked, "Schedule"), won}
}

// Stages lists an account's CRM stages, in order.
func (s *Store) Stages(ctx context.Context, accountID int64) ([]models.Stage, error) {
	var ss []models.Stage
	err := s.q(ctx).Where("account_id = ?", accountID).Order("position, id").Find(&ss).Error
	return ss, wrap("stages", err)
}

// addTemplateStages gives a new account TemplateStages.
func (s *Store) addTemplateStages(ctx context.Context, accountID int64) error {
	now := time.Now().UTC()
	ss := make([]models.Stage, len(TemplateStages))
	for i, t := range TemplateStages {
		t.AccountID, t.CreatedAt = accountID, now
		ss[i] = t
	}
	return s.q(ctx).Create(&ss).Error
}

// LeadKey names the field a lead is looked up by (id, external_id,
// meta_lead_id, email, phone) and its value; for email and phone the
// value is the match key's hash.
type LeadKey struct {
	Field string
	Value string
}

// LeadByKey finds an account's lead by k: by its id, external_id or
// meta_lead_id, or the most recent lead with the email or phone hash.
func (s *Store) LeadByKey(ctx context.Context, accountID int64, k LeadKey) (models.Lead, error) {
	q := s.q(ctx).Where("account_id = ?", accountID)
	switch k.Field {
	case "id":
		q = q.Where("id = ?", k.Value)
	case "external_id":
		q = q.Where("external_id = ?", k.Value)
	case "meta_lead_id":
		q = q.Where("meta_lead_id = ?", k.Value).Order("created_at DESC, id DESC")
	case "email":
		q = q.Where("email_hash = ?", k.Value).Order("created_at DESC, id DESC")
	case "phone":
		q = q.Where("phone_hash = ?", k.Value).Order("created_at DESC, id DESC")
	default:
		return models.Lead{}, ErrNotFound
	}
	var l models.Lead
	err := q.Take(&l).Error
	return l, wrap("lead by key", err)
}

// ErrSameChange means a stage change was recorded already: the same
// change_id for the lead, or without one the same stage at the same time.
var ErrSameChange = errors.New("store: the stage change is recorded already")

// sameChange finds the stored change that c repeats, if any.
func (s *Store) sameChange(ctx context.Context, c *models.StageChange) (models.StageChange, error) {
	q := s.q(ctx).Where("account_id = ? AND lead_id = ?", c.AccountID, c.LeadID)
	if c.ChangeID != nil {
		q = q.Where("change_id = ?", *c.ChangeID)
	} else {
		q = q.Where("change_id IS NULL AND stage = ? AND occurred_at = ?", c.Stage, c.OccurredAt.UTC())
	}
	var got models.StageChange
	err := q.Order("id").Take(&got).Error
	return got, wrap("same stage change", err)
}

// SameStageChange finds the stored change that c repeats (its lead and
// change_id, or without one its lead, stage and time); ErrNotFound when c
// is new.
func (s *Store) SameStageChange(ctx context.Context, c models.StageChange) (models.StageChange, error) {
	return s.sameChange(ctx, &c)
}

// StageChangeEvents lists the events queued for a stage change, in
// event_time order.
func (s *Store) StageChangeEvents(ctx context.Context, accountID, changeID int64) ([]models.Event, error) {
	evs, err := findShown(withState(s.q(ctx).Model(&models.Event{})).
		Where("events.account_id = ? AND events.stage_change_id = ?", accountID, changeID).
		Order("events.event_time, events.id"), time.Now())
	return evs, wrap("stage change events", err)
}

// ReachedStages are the stages a lead has reached (its stage changes but
// the junk markers), lower-cased.
func (s *Store) ReachedStages(ctx context.Context, accountID, leadID int64) (map[string]bool, error) {
	var names []string
	err := s.q(ctx).Model(&models.StageChange{}).
		Where("account_id = ? AND lead_id = ? AND stage NOT IN (?, ?)", accountID, leadID, models.StageJunk, models.StageNotJunk).
		Distinct("stage").Pluck("stage", &names).Error
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[strings.ToLower(n)] = true
	}
	return out, wrap("reached stages", err)
}
