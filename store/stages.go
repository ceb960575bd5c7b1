package store

import (
	"context"

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
	now := s.Now()
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

// StageChangeEvents lists the events queued for a stage change, in
// event_time order.
func (s *Store) StageChangeEvents(ctx context.Context, accountID, changeID int64) ([]models.Event, error) {
	evs, err := s.StageChangesEvents(ctx, accountID, []int64{changeID})
	return evs[changeID], err
}
