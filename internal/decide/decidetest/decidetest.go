// Package decidetest records stage changes for tests through the one
// recorder (decide.Decider), as every way in records them.
package decidetest

import (
	"context"

	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Mark records change c of lead c.LeadID of account c.AccountID, as the
// stage API sends it (decide.FromAPI; a junk verdict as a person's,
// decide.FromPerson), and returns the lead as the change leaves it (for a
// change recorded before, as it is). A refused change returns its
// *decide.Refusal, one whose lead is not found store.ErrNotFound.
func Mark(ctx context.Context, s *store.Store, c models.StageChange) (models.Lead, error) {
	origin := decide.FromAPI
	if c.Stage == models.StageJunk || c.Stage == models.StageNotJunk {
		origin = decide.FromPerson
	}
	out, err := decide.New(s, nil, nil).RecordAll(ctx, c.AccountID, []decide.Change{{
		Keys: decide.ByID(c.LeadID), Stage: c.Stage, OccurredAt: c.OccurredAt, Value: c.Value, Currency: c.Currency,
		ChangeID: c.ChangeID, UserID: c.UserID, Source: c.Source, Origin: origin,
	}})
	switch {
	case err != nil:
		return models.Lead{}, err
	case out[0].Refused != nil && out[0].Refused.Code == decide.LeadNotFound:
		return models.Lead{}, store.ErrNotFound
	case out[0].Refused != nil:
		return models.Lead{}, out[0].Refused
	case out[0].Replayed:
		return s.Lead(ctx, c.AccountID, c.LeadID)
	}
	return out[0].Lead, nil
}
