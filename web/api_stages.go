package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/capture"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/models"
)

// stageReply is the answer of POST /api/v1/stages.
type stageReply struct {
	Change stageChangeReply      `json:"change"`
	Events []capture.QueuedEvent `json:"events"`
	// Outcome is "created", or "existing" for a change recorded before.
	Outcome string `json:"outcome"`
	// Warnings say what was recorded but will not reach Meta.
	Warnings []stageWarning `json:"warnings,omitempty"`
}

// stageWarning is one of a stage reply's warnings: code unmapped_stage
// for a stage that is none of the account's stages by name or alias.
type stageWarning struct {
	Code    string `json:"code"`
	Stage   string `json:"stage"`
	Message string `json:"message"`
}

type stageChangeReply struct {
	ID         int64    `json:"id"`
	LeadID     int64    `json:"lead_id"`
	Stage      string   `json:"stage"`
	OccurredAt string   `json:"occurred_at"`
	Value      *float64 `json:"value"`
	Currency   string   `json:"currency"`
	ChangeID   *string  `json:"change_id"`
}

// createStage records a CRM stage change of a lead (docs/api.md, "Stage
// changes").
func (h *Handler) createStage(c echo.Context) error {
	acc := currentAccount(c).Account
	req, derr := capture.DecodeStage(c.Request().Body)
	if derr != nil {
		return apiFail(c, derr.Status, derr.Code, derr.Message, derr.Field)
	}
	change, verr := req.Change(acc)
	if verr != nil {
		return apiFail(c, verr.Status, verr.Code, verr.Message, verr.Field)
	}
	keyID, _ := c.Get(ctxIngestKey).(int64)
	change.Via, change.ViaID = models.ViaAPI, &keyID
	res, err := h.decider.Record(c.Request().Context(), acc.ID, change)
	if err != nil {
		return err
	}
	if r := res.Refused; r != nil {
		return apiFail(c, refusalStatus(r.Code), string(r.Code), r.Message, r.Field)
	}
	reply := stageReply{Change: changeReply(res.Change), Events: capture.Describe(res.Events, res.Datasets), Outcome: "created"}
	if res.Unmapped {
		reply.Warnings = append(reply.Warnings, stageWarning{Code: "unmapped_stage", Stage: res.Change.Stage,
			Message: "recorded, but " + strconv.Quote(res.Change.Stage) + " is none of the account's stages or their aliases, " +
				"so it sends nothing: add it as an alias of a stage on the Stages page"})
	}
	status := http.StatusCreated
	if res.Replayed {
		reply.Outcome, status = "existing", http.StatusOK
	}
	return c.JSON(status, reply)
}

// refusalStatus is the stage API's status for a change the recorder
// refused.
func refusalStatus(code decide.Code) int {
	if code == decide.LeadNotFound {
		return http.StatusNotFound
	}
	return http.StatusUnprocessableEntity
}

func changeReply(sc models.StageChange) stageChangeReply {
	return stageChangeReply{ID: sc.ID, LeadID: sc.LeadID, Stage: sc.Stage, OccurredAt: sc.OccurredAt.UTC().Format(time.RFC3339Nano),
		Value: sc.Value, Currency: sc.Currency, ChangeID: sc.ChangeID}
}
