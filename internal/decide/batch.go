package decide

import (
	"context"
	"errors"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// StageItem is one stage change to record: the key its lead is found by
// and the change (capture.ValidStage, as the stage API validates it).
type StageItem struct {
	Key    store.LeadKey
	Change models.StageChange
}

// StageOutcome is what became of one StageItem: its result, or the
// Problem that refused it (lead not found, before the lead, a Purchase
// without its value).
type StageOutcome struct {
	StageResult
	Problem *Problem
}

// Stages records stage changes of an account's leads, in order, as Stage
// records one: a change later in items sees those before it. With dry set
// it decides and writes nothing: the outcomes say what recording would do
// (events with the status they would be queued with). The error is for the
// database; a change the account cannot take is its outcome's Problem.
func (d *Decider) Stages(ctx context.Context, accountID int64, items []StageItem, dry bool) ([]StageOutcome, error) {
	out := make([]StageOutcome, len(items))
	for i, it := range items {
		if dry {
			return nil, errors.New("decide: dry stages: not yet")
		}
		res, err := d.Stage(ctx, accountID, it.Key, it.Change)
		var p *Problem
		if errors.As(err, &p) {
			out[i].Problem = p
			continue
		}
		if err != nil {
			return nil, err
		}
		out[i].StageResult = res
	}
	return out, nil
}
