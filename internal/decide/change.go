package decide

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Problem is a stage change the account cannot take, for the API's error
// reply: its HTTP status, a code, the field at fault and what to do.
type Problem struct {
	Status  int
	Code    string
	Field   string
	Message string
}

func (p *Problem) Error() string { return p.Message }

// StageResult is a recorded stage change and its events.
type StageResult struct {
	Lead   models.Lead
	Change models.StageChange
	// Events are the events queued for the change, filled in ones first.
	Events []models.Event
	// Replayed: the change was recorded before (its change_id, or its
	// stage and time); nothing was queued now.
	Replayed bool
}

// Stage records a stage change of the account's lead found by key, as the
// stage API and the CSV upload send it: idempotent (a change recorded
// already answers with what was recorded), refused with a *Problem when
// the lead is not found, the change predates the lead, or a Purchase lacks
// its value. Its events are decided as Mark decides them.
func (d *Decider) Stage(ctx context.Context, accountID int64, key store.LeadKey, change models.StageChange) (StageResult, error) {
	l, err := d.store.LeadByKey(ctx, accountID, key)
	if errors.Is(err, store.ErrNotFound) {
		return StageResult{}, &Problem{Status: http.StatusNotFound, Code: "lead_not_found", Field: "lead." + key.Field,
			Message: fmt.Sprintf("no lead of this account has this %s", strings.ReplaceAll(key.Field, "_", " "))}
	}
	if err != nil {
		return StageResult{}, err
	}
	change.AccountID, change.LeadID, change.ID = accountID, l.ID, 0
	if res, err := d.replay(ctx, l, change); !errors.Is(err, store.ErrNotFound) {
		return res, err
	}
	if change.OccurredAt.Before(l.CreatedAt.Truncate(time.Second)) {
		return StageResult{}, &Problem{Status: http.StatusUnprocessableEntity, Code: "before_lead", Field: "occurred_at",
			Message: fmt.Sprintf("occurred_at is before the lead was captured (%s): a stage change cannot come first",
				l.CreatedAt.UTC().Format(time.RFC3339))}
	}
	rules, err := d.store.SendRules(ctx, accountID)
	if err != nil {
		return StageResult{}, err
	}
	if msg := ChangeProblem(rules, change); msg != "" {
		return StageResult{}, &Problem{Status: http.StatusUnprocessableEntity, Code: "value_required", Field: "value", Message: msg}
	}
	after, _, err := d.Record(ctx, &change)
	if errors.Is(err, store.ErrSameChange) {
		// Recorded meanwhile by a request like this one.
		return d.replay(ctx, l, change)
	}
	if err != nil {
		return StageResult{}, err
	}
	evs, err := d.store.StageChangeEvents(ctx, accountID, change.ID)
	return StageResult{Lead: after, Change: change, Events: evs}, err
}

// replay answers a change recorded already with what was recorded;
// ErrNotFound when it is new.
func (d *Decider) replay(ctx context.Context, l models.Lead, change models.StageChange) (StageResult, error) {
	same, err := d.store.SameStageChange(ctx, change)
	if err != nil {
		return StageResult{}, err
	}
	evs, err := d.store.StageChangeEvents(ctx, l.AccountID, same.ID)
	return StageResult{Lead: l, Change: same, Events: evs, Replayed: true}, err
}
