package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/views"
)

// Bounds of a connection's stage table as posted.
const (
	maxCRMStageRows = 2000
	maxCRMStageID   = 200
)

// crmDeliveriesPerPage is how many deliveries a connection's page lists.
const crmDeliveriesPerPage = 50

// crmPageView is a connection's page: its URL, its stage table with the
// account's stages, and its deliveries before the delivery id before (0:
// the newest).
func (h *Handler) crmPageView(c echo.Context, conn models.CRMConnection, before int64) (views.CRMPage, error) {
	ctx := c.Request().Context()
	a := currentAccount(c).Account
	kind := crm.Kind(conn.Kind)
	v := views.CRMPage{ID: conn.ID, Kind: conn.Kind, KindTitle: kind.Title(), Name: conn.Name, Before: before,
		Secret: secretState(conn.SecretSealed, conn.SecretEnv), APIToken: secretState(conn.APITokenSealed, conn.APITokenEnv)}
	var err error
	if v.HookURL, v.Guessed, err = h.hookURL(c, conn); err != nil {
		return v, err
	}
	if kind == crm.Generic {
		v.SampleBody, v.Curl = genericExample(v.HookURL, conn.Fields, h.now())
	}
	stages, err := h.store.Stages(ctx, a.ID)
	if err != nil {
		return v, err
	}
	rows, err := h.store.CRMStages(ctx, a.ID, conn.ID)
	if err != nil {
		return v, err
	}
	now, loc := h.now(), location(a)
	v.SignIns = h.signInsLine(conn, loc)
	v.Stages = views.CRMStageTable{CanLoad: kind != crm.Generic,
		AddID: views.Field{Name: "new_crm_stage_id", Label: "A stage value your system sends"}}
	for _, st := range stages {
		v.Stages.Stages = append(v.Stages.Stages, st.Name)
	}
	labels := map[string]string{}
	for _, r := range crm.WithStatusStages(kind, rows) {
		row := views.CRMStageRow{ID: r.CRMStageID, Label: r.Label, Pipeline: r.Pipeline, Stage: r.Stage}
		// Stages are matched ignoring case (a setup file may spell one
		// otherwise): the row shows the list's spelling.
		if i := slices.IndexFunc(v.Stages.Stages, func(s string) bool { return strings.EqualFold(s, r.Stage) }); i >= 0 {
			row.Stage = v.Stages.Stages[i]
		} else {
			row.Missing = r.Stage != ""
		}
		if r.SeenAt != nil {
			row.Seen = views.NewStamp(*r.SeenAt, now, loc)
			row.Waits = r.Stage == ""
		}
		v.Stages.Rows = append(v.Stages.Rows, row)
		labels[r.CRMStageID] = r.Label
	}
	ds, err := h.store.CRMDeliveries(ctx, a.ID, conn.ID, before, crmDeliveriesPerPage+1)
	if err != nil {
		return v, err
	}
	if len(ds) > crmDeliveriesPerPage {
		ds = ds[:crmDeliveriesPerPage]
		v.More = ds[len(ds)-1].ID
	}
	for _, d := range ds {
		row := views.CRMDeliveryRow{ID: d.ID, Received: views.NewStamp(d.ReceivedAt, now, loc), StageID: d.CRMStageID,
			StageLabel: labels[d.CRMStageID], Occurred: views.NewStamp(d.OccurredAt, now, loc)}
		row.Body, row.WholeBody = foldBody(a.ID, conn.ID, d)
		if d.CRMStageID == "" {
			row.StageLabel = "—" // a body needing attention may carry none
		}
		row.Outcome, row.Badge = deliveryOutcome(d, kind, labels, views.NewStamp(d.NextTryAt, now, loc))
		if d.Status == models.DeliveryDone && d.LeadID != nil {
			row.LeadURL = views.AccountURL(a.ID, "/leads/"+strconv.FormatInt(*d.LeadID, 10))
		}
		v.Deliveries = append(v.Deliveries, row)
	}
	return v, nil
}

// deliveryOutcome says what became of a delivery, in words, and the badge
// that goes with it.
func deliveryOutcome(d models.CRMDelivery, kind crm.Kind, labels map[string]string, next views.Stamp) (string, string) {
	reason := func(s string) string {
		if d.Reason == "" {
			return s
		}
		return s + ": " + d.Reason
	}
	switch d.Status {
	case models.DeliveryDone:
		if d.Stage == "" {
			return "Done", "ok"
		}
		return "Recorded as " + d.Stage, "ok"
	case models.DeliveryGaveUp:
		if d.Reason == "" {
			return "Given up", "bad"
		}
		return sentence(d.Reason), "bad"
	}
	switch {
	case d.TriedAt == nil:
		return "Received, not processed yet", "muted"
	case d.WaitingFor == models.WaitingLead:
		return reason("Waiting for its lead"), "warn"
	case d.WaitingFor == models.WaitingAttention:
		return reason("Needs attention"), "bad"
	case d.WaitingFor == models.WaitingMapping && d.CRMStageID == "":
		return reason("Waiting for the field mapping"), "warn"
	case d.WaitingFor == models.WaitingMapping:
		stage := d.CRMStageID
		if l := labels[stage]; l != "" {
			stage = l + " (" + d.CRMStageID + ")"
		}
		return "Stage " + stage + " is not mapped", "warn"
	case d.WaitingFor == models.WaitingCRM:
		return reason(kind.Title()+" API failed") + ", next try " + next.Short, "bad"
	}
	return "Queued to be tried again", "muted"
}

// genericExample is a body a generic connection takes with its mapping,
// and the curl line that signs and posts it.
func genericExample(hookURL, fieldsJSON string, now time.Time) (string, string) {
	fields, _ := crm.StoredFields(fieldsJSON)
	sample := map[string]any{}
	put := func(target string, value any) {
		path := fields[target]
		if path == "" {
			path = target
		}
		parts := strings.Split(path, ".")
		m := sample
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[parts[len(parts)-1]] = value
	}
	put("external_id", "form-123")
	put("email", "ada@example.com")
	put("stage", "won")
	put("occurred_at", now.UTC().Truncate(time.Minute).Format(time.RFC3339))
	put("value", 1200)
	put("currency", "EUR")
	put("change_id", "deal-42-won")
	b, _ := json.MarshalIndent(sample, "", "  ")
	compact, _ := json.Marshal(sample)
	curl := `BODY='` + string(compact) + `'
T=$(date +%s)
SIG=$(printf '%s.%s' "$T" "$BODY" | openssl dgst -sha256 -hmac "$SECRET" | sed 's/^.* //')
curl -X POST ` + hookURL + ` \
  -H "Content-Type: application/json" \
  -H "X-Leadsignal-Signature: t=$T,v1=$SIG" \
  -d "$BODY"`
	return string(b), curl
}

// mapCRMStages saves a connection's stage table: the account's stage of
// each CRM stage id ("" unmaps it) and, for a generic connection, a value
// added by hand. Deliveries waiting for a mapping are tried again at once.
func (h *Handler) mapCRMStages(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	conn, err := h.crmConnectionParam(c)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "The form could not be read.")
	}
	ids, stages := form["crm_stage_id"], form["stage"]
	if len(ids) != len(stages) || len(ids) > maxCRMStageRows {
		return echo.NewHTTPError(http.StatusBadRequest, "The stage table's rows do not match: reload the page.")
	}
	v, err := h.crmPageView(c, conn, 0)
	if err != nil {
		return err
	}
	saved := map[string]string{}
	for _, r := range v.Stages.Rows {
		saved[r.ID] = r.Stage
	}
	valid := func(id, stage string) bool {
		return stage == "" || slices.Contains(v.Stages.Stages, stage) || saved[id] == stage
	}
	posted := map[string]string{}
	problem := ""
	for i, id := range ids {
		if _, ok := saved[id]; !ok {
			problem = "The stage table changed since the page was loaded: check it and save again."
			continue
		}
		if !valid(id, stages[i]) {
			problem = "Choose one of the account's stages for each row."
			continue
		}
		posted[id] = stages[i]
	}
	newID := strings.TrimSpace(c.FormValue("new_crm_stage_id"))
	newStage := c.FormValue("new_stage")
	if conn.Kind == string(crm.Generic) && newID != "" {
		switch {
		case len(newID) > maxCRMStageID || strings.ContainsFunc(newID, unicode.IsControl):
			v.Stages.AddID.Error = fmt.Sprintf("A stage value is at most %d characters, on one line.", maxCRMStageID)
		case newStage == "":
			v.Stages.AddID.Error = "Choose the account's stage it means."
		case !valid(newID, newStage):
			v.Stages.AddID.Error = "Choose one of the account's stages."
		default:
			posted[newID] = newStage
		}
	}
	if problem != "" || v.Stages.AddID.Error != "" {
		// The table as typed, with its problem.
		for i := range v.Stages.Rows {
			if s, ok := posted[v.Stages.Rows[i].ID]; ok {
				v.Stages.Rows[i].Stage = s
			}
		}
		v.Stages.Error, v.Stages.AddID.Value, v.Stages.AddStage = problem, newID, newStage
		return h.renderCRMPage(c, http.StatusUnprocessableEntity, v)
	}
	// Only the rows that changed: an unchanged row is not written again.
	changed := map[string]string{}
	for id, s := range posted {
		if old, ok := saved[id]; !ok || old != s {
			changed[id] = s
		}
	}
	if len(changed) > 0 {
		if err := h.store.MapCRMStages(ctx, a.ID, conn.ID, changed, h.now().UTC()); err != nil {
			return err
		}
		h.crmNotify()
	}
	h.log.Info("crm stages mapped", "account_id", a.ID, "connection_id", conn.ID, "changed", len(changed))
	setFlash(c, "ok", "Stages saved: "+views.Plural(int64(len(changed)), "row changed", "rows changed")+".")
	return redirect(c, crmURL(a.ID, conn.ID, "#crm-stages"))
}

// crmStageLister lists a CRM's pipelines' stages with an API token.
type crmStageLister interface {
	Stages(ctx context.Context) ([]crm.Stage, error)
}

// stageLister is the API of conn's kind (HubSpot or Pipedrive), with
// token.
func (h *Handler) stageLister(conn models.CRMConnection, token string) crmStageLister {
	if crm.Kind(conn.Kind) == crm.HubSpot {
		return crm.HubSpotAPI{BaseURL: h.crm.HubSpotAPIURL, Token: token}
	}
	return crm.PipedriveAPI{BaseURL: h.crm.PipedriveAPIURL, Token: token}
}

// loadCRMStages asks the CRM's API for its pipelines' stages, with the
// connection's API token, and adds them to its stage table with their
// labels; mappings are kept. A failure is said in words, never with the
// token.
func (h *Handler) loadCRMStages(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	conn, err := h.crmConnectionParam(c)
	if err != nil {
		return err
	}
	if crm.Kind(conn.Kind) == crm.Generic {
		return store.ErrNotFound // its stages are added by hand
	}
	back := crmURL(a.ID, conn.ID, "#crm-stages")
	title := crm.Kind(conn.Kind).Title()
	if conn.APITokenSealed == "" {
		msg := "Save the connection's API token first (Edit): " + title + " lists its stages to it."
		if conn.APITokenEnv != "" {
			msg = "The API token is not set: set $" + conn.APITokenEnv + " and apply the setup file again."
		}
		setFlash(c, "error", msg)
		return redirect(c, back)
	}
	token, err := h.box.Open(conn.APITokenSealed, crm.APITokenLabel(conn.Token))
	if err != nil {
		setFlash(c, "error", "The saved API token cannot be read (was LEADSIGNAL_SECRET changed?): save it again (Edit).")
		return redirect(c, back)
	}
	api := h.stageLister(conn, token)
	// The client's message never holds the token (crm.APIError).
	listed, err := api.Stages(ctx)
	if err != nil {
		h.log.Warn("crm stages not loaded", "account_id", a.ID, "connection_id", conn.ID, "error", err.Error())
		setFlash(c, "error", title+"'s API did not list the stages: "+strings.TrimSuffix(err.Error(), ".")+".")
		return redirect(c, back)
	}
	rows := make([]models.CRMStage, 0, len(listed))
	for _, st := range listed {
		if st.ID == "" || len(st.ID) > maxCRMStageID {
			continue
		}
		rows = append(rows, models.CRMStage{CRMStageID: st.ID, Label: crm.Cut(st.Label), Pipeline: crm.Cut(st.Pipeline), Position: st.Order})
	}
	if len(rows) > maxCRMStageRows {
		rows = rows[:maxCRMStageRows]
	}
	if err := h.store.ListCRMStages(ctx, a.ID, conn.ID, rows); err != nil {
		return err
	}
	if len(rows) == 0 {
		setFlash(c, "error", title+" listed no stages: check the token's scopes.")
		return redirect(c, back)
	}
	setFlash(c, "ok", "Loaded "+views.Plural(int64(len(rows)), "stage", "stages")+" from "+title+"; mappings kept.")
	return redirect(c, back)
}

// retryCRMDelivery makes one of a connection's deliveries waiting and due
// now, whatever became of it.
func (h *Handler) retryCRMDelivery(c echo.Context) error {
	ctx := c.Request().Context()
	a := currentAccount(c)
	conn, err := h.crmConnectionParam(c)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(c.Param("delivery"), 10, 64)
	if err != nil {
		return store.ErrNotFound
	}
	d, err := h.store.CRMDelivery(ctx, a.ID, id)
	if err != nil {
		return err
	}
	if d.ConnectionID != conn.ID {
		return store.ErrNotFound
	}
	if err := h.store.RetryCRMDelivery(ctx, a.ID, d.ID, h.now().UTC()); err != nil {
		return err
	}
	h.crmNotify()
	h.log.Info("crm delivery retried", "account_id", a.ID, "connection_id", conn.ID, "delivery_id", d.ID)
	setFlash(c, "ok", "Delivery queued: it is tried again now.")
	return redirect(c, crmURL(a.ID, conn.ID, "#deliveries"))
}
