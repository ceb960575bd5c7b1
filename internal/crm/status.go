package crm

import (
	"slices"

	"github.com/leadsignal/leadsignal/models"
)

// StatusStages are the rows a connection's stage table lists beside its
// pipelines' stages, whatever its CRM's API lists: Pipedrive's won and
// lost statuses (a deal marked won keeps its stage_id; see StatusWon).
// Each carries the account's stage it means until a person maps it
// otherwise: won the account's won stage, lost none.
func StatusStages(kind Kind) []models.CRMStage {
	if kind != Pipedrive {
		return nil
	}
	return []models.CRMStage{
		{CRMStageID: StatusWon, Label: "Won", Stage: models.StageWon},
		{CRMStageID: StatusLost, Label: "Lost"},
	}
}

// WithStatusStages is a connection's stage table as stored (rows) with
// its kind's StatusStages: a status row it lacks is added last with its
// default, one it has keeps its mapping and is given its label.
func WithStatusStages(kind Kind, rows []models.CRMStage) []models.CRMStage {
	status := StatusStages(kind)
	if len(status) == 0 {
		return rows
	}
	out := append([]models.CRMStage(nil), rows...)
	for _, st := range status {
		i := slices.IndexFunc(out, func(r models.CRMStage) bool { return r.CRMStageID == st.CRMStageID })
		switch {
		case i < 0:
			out = append(out, st)
		case out[i].Label == "":
			out[i].Label = st.Label
		}
	}
	return out
}
