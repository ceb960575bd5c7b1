package store

import (
	"context"

	"github.com/leadsignal/leadsignal/models"
)

// MappedCRMStages lists the rows of an account's CRM connections' stage
// tables that map a CRM stage to one of its stages (Stage set), by
// connection and position: their labels are aliases of those stages
// (name.NewStages), as the recorder reads them (ReadStages).
func (s *Store) MappedCRMStages(ctx context.Context, accountID int64) ([]models.CRMStage, error) {
	var rows []models.CRMStage
	err := s.q(ctx).Where("account_id = ? AND stage <> ''", accountID).Order("connection_id, position, crm_stage_id").Find(&rows).Error
	return rows, wrap("mapped crm stages", err)
}

// LabelOwner is the stage of ss other than the one of id except whose
// name or alias reads as label (name.StageKey), as the store refuses a
// taken label (SetStageAliases, RenameStage, AppendStage), and true;
// false when none has it. Pages say with it why a label is taken.
func LabelOwner(ss []models.Stage, label string, except int64) (models.Stage, bool) {
	return labelOwner(ss, label, except)
}
