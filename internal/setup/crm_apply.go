package setup

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// crmConnections makes the account's CRM connections the file's clean
// list. A connection is found by its kind and name, ignoring the name's
// case, and keeps its token, so its hook URL; one the list leaves out is
// deleted, and its URL answers 404 from then on; a new one gets a new
// token. The deletions go first, so that a list at the limit fits.
func (a *applier) crmConnections(ctx context.Context, accountID int64, specs []CRMSpec) error {
	cur, err := a.tx.CRMConnections(ctx, accountID)
	if err != nil {
		return err
	}
	wanted := map[string]bool{}
	for _, spec := range specs {
		wanted[crmKey(spec.Kind, spec.Name)] = true
	}
	byKey := map[string]models.CRMConnection{}
	var deleted []models.CRMConnection
	for _, c := range cur {
		k := crmKey(crm.Kind(c.Kind), c.Name)
		if wanted[k] {
			byKey[k] = c
			continue
		}
		if err := a.tx.DeleteCRMConnection(ctx, accountID, c.ID); err != nil {
			return err
		}
		a.change("crm_connections", "deleted %q (%s): its hook URL answers 404 from now on", c.Name, crm.Kind(c.Kind).Title())
		a.report.Summary.CRMDeleted++
		deleted = append(deleted, c)
	}
	// The stages the file's stage mappings added are among them.
	stages, err := a.tx.Stages(ctx, accountID)
	if err != nil {
		return err
	}
	for i, spec := range specs {
		path := fmt.Sprintf("crm_connections[%d]", i)
		if c, ok := byKey[crmKey(spec.Kind, spec.Name)]; ok {
			err = a.updateCRM(ctx, path, c, spec, stages)
		} else {
			err = a.createCRM(ctx, path, accountID, spec, stages, renamed(deleted, spec))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// renamed lists the names of the deleted connections that a person may
// have meant to rename to spec: those of its kind, and those of its name.
func renamed(deleted []models.CRMConnection, spec CRMSpec) []string {
	var out []string
	for _, c := range deleted {
		if crm.Kind(c.Kind) == spec.Kind || strings.EqualFold(c.Name, spec.Name) {
			out = append(out, fmt.Sprintf("%q (%s)", c.Name, crm.Kind(c.Kind).Title()))
		}
	}
	return out
}

// createCRM creates the connection spec, with a new token; gone are the
// connections the apply deleted that a person may have meant to rename
// to it (renamed).
func (a *applier) createCRM(ctx context.Context, path string, accountID int64, spec CRMSpec, stages []models.Stage, gone []string) error {
	c := models.CRMConnection{
		AccountID: accountID, Kind: string(spec.Kind), Name: spec.Name, Token: store.NewCRMToken(),
		LeadIDProperty: spec.LeadIDProperty, Fields: "{}",
	}
	if spec.Kind == crm.Generic {
		c.Fields = crm.FieldsJSON(spec.Fields)
	}
	a.change(path, "created %q (%s)", c.Name, spec.Kind.Title())
	a.report.Summary.CRMAdded++
	const give = "give the CRM its hook URL, which the Stages page and setup export show"
	if len(gone) > 0 {
		a.note(path, "a new connection with a new hook URL: a connection is known by its kind and name, so this is not %s renamed, "+
			"whose URL answers 404 from now on; %s", strings.Join(gone, " or "), give)
	} else {
		a.note(path, "%s", give)
	}
	// The seal labels name the token, which is known before the insert.
	if a.getenv == nil {
		a.crmSecretsNotRead(path, &c, spec, true)
	} else {
		a.crmSecrets(path, &c, spec)
	}
	if err := a.tx.CreateCRMConnection(ctx, &c); err != nil {
		return err
	}
	return a.crmStageIDs(ctx, path, c, spec.StageIDs, stages)
}

// updateCRM brings the stored connection c in line with spec, writing
// only what differs. Its kind and token never change.
func (a *applier) updateCRM(ctx context.Context, path string, c models.CRMConnection, spec CRMSpec, stages []models.Stage) error {
	before := c
	n := len(a.report.Changes)
	a.set(path+".name", &c.Name, spec.Name)
	a.set(path+".lead_id_property", &c.LeadIDProperty, spec.LeadIDProperty)
	if spec.Kind == crm.Generic {
		cur, readable := crm.StoredFields(c.Fields)
		want := spec.Fields
		if want == nil {
			want = map[string]string{}
		}
		if !readable || !maps.Equal(cur, want) {
			a.change(path+".fields", "%s → %s", fieldsText(cur, readable), fieldsText(want, true))
			c.Fields = crm.FieldsJSON(want)
		}
	}
	if a.getenv == nil {
		a.crmSecretsNotRead(path, &c, spec, false)
	} else {
		a.crmSecrets(path, &c, spec)
	}
	if spec.SecretEnv == "" && c.SecretSealed != "" {
		a.note(path+".secret_env", "not given; the stored secret is kept")
	}
	if spec.APITokenEnv == "" && c.APITokenSealed != "" {
		a.note(path+".api_token_env", "not given; the stored API token is kept")
	}
	if c != before {
		if err := a.tx.SaveCRMConnection(ctx, &c); err != nil {
			return err
		}
	}
	if err := a.crmStageIDs(ctx, path, c, spec.StageIDs, stages); err != nil {
		return err
	}
	if len(a.report.Changes) > n {
		a.report.Summary.CRMChanged++
	}
	return nil
}

// crmSecrets seals the connection's secret and API token from the
// environment variables the spec names, as a dataset's (secret); a secret
// the spec names no variable for is kept.
func (a *applier) crmSecrets(path string, c *models.CRMConnection, spec CRMSpec) {
	if spec.SecretEnv != "" {
		a.secret(path+".secret_env", "secret", &c.SecretSealed, &c.SecretEnv, spec.SecretEnv, crm.SecretLabel(c.Token))
	}
	if spec.APITokenEnv != "" {
		a.secret(path+".api_token_env", "API token", &c.APITokenSealed, &c.APITokenEnv, spec.APITokenEnv, crm.APITokenLabel(c.Token))
	}
}

// crmSecretsNotRead is crmSecrets for an apply that reads no environment
// variable: a stored secret is kept; a connection without one (isNew, or
// never given one) records the variable the spec names, which its hook's
// 503 then names.
func (a *applier) crmSecretsNotRead(path string, c *models.CRMConnection, spec CRMSpec, isNew bool) {
	a.envNotRead(path+".secret_env", "secret", c.SecretSealed, &c.SecretEnv, spec.SecretEnv, isNew,
		"save the secret on the connection's page, or apply the file with leadsignal setup apply; until then its hook answers 503 naming "+spec.SecretEnv)
	a.envNotRead(path+".api_token_env", "API token", c.APITokenSealed, &c.APITokenEnv, spec.APITokenEnv, isNew,
		"save the API token on the connection's page, or apply the file with leadsignal setup apply; until then its contacts cannot be looked up")
}

// envNotRead notes that the variable env (none when "") was not read: the
// stored secret (sealed) is kept; without one, env becomes the secret's
// source, reported as a change unless the connection is new, and the note
// says what to do (todo).
func (a *applier) envNotRead(path, what, sealed string, source *string, env string, isNew bool, todo string) {
	switch {
	case env == "":
	case sealed != "":
		a.note(path, "%s; the stored %s is kept", envNotRead, what)
	default:
		if *source != env && !isNew {
			a.change(path, "%s → %s (no %s stored yet)", show(*source), env, what)
		}
		*source = env
		a.note(path, "%s; %s", envNotRead, todo)
	}
}

// crmStageIDs maps the connection's CRM stage ids as ids says (nil: the
// table is kept), each to the account's stage as the account spells it,
// and unmaps the ids of its table that ids leaves out, but for its status
// rows (crm.StatusStages: Pipedrive's won and lost), which only a file
// that names them changes. Only what differs is written, one change an id.
func (a *applier) crmStageIDs(ctx context.Context, path string, c models.CRMConnection, ids map[string]string, stages []models.Stage) error {
	if ids == nil {
		return nil
	}
	table, err := a.tx.CRMStages(ctx, c.AccountID, c.ID)
	if err != nil {
		return err
	}
	cur := map[string]string{}
	for _, row := range crm.WithStatusStages(crm.Kind(c.Kind), table) {
		cur[row.CRMStageID] = row.Stage
	}
	status := map[string]bool{}
	for _, row := range crm.StatusStages(crm.Kind(c.Kind)) {
		status[row.CRMStageID] = true
	}
	changed := map[string]string{}
	for id, stage := range ids {
		if st := spelled(stages, stage); cur[id] != st {
			changed[id] = st
		}
	}
	for id, stage := range cur {
		// A file written before Pipedrive's won and lost were read names
		// neither: they keep their mapping (won: the won stage).
		if _, ok := ids[id]; !ok && stage != "" && !status[id] {
			changed[id] = ""
		}
	}
	if len(changed) == 0 {
		return nil
	}
	for _, id := range slices.Sorted(maps.Keys(changed)) {
		a.change(path+".stage_ids."+id, "%s → %s", mappedText(cur[id]), mappedText(changed[id]))
	}
	return a.tx.MapCRMStages(ctx, c.AccountID, c.ID, changed, time.Now())
}

// spelled is the account's stage named like want, ignoring case, as the
// account spells it; want itself when it has none.
func spelled(stages []models.Stage, want string) string {
	for _, s := range stages {
		if strings.EqualFold(s.Name, want) {
			return s.Name
		}
	}
	return want
}

func mappedText(stage string) string {
	if stage == "" {
		return "unmapped"
	}
	return stage
}

// fieldsText says a mapping in a change: "email: contact.email, stage:
// deal.stage", by target.
func fieldsText(fields map[string]string, readable bool) string {
	switch {
	case !readable:
		return "unreadable"
	case len(fields) == 0:
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		parts = append(parts, k+": "+fields[k])
	}
	return strings.Join(parts, ", ")
}

// exportCRM lists the account's connections cs as the file writes them,
// each with its hook URL (absolute with publicURL, LEADSIGNAL_PUBLIC_URL,
// when set), its mapped stage ids and, for a generic one, its fields. A
// secret saved in the web UI gets a name from suggest and a note.
func exportCRM(ctx context.Context, s *store.Store, cs []models.CRMConnection, publicURL string, suggest func(string) string) ([]CRMSpec, []Note, error) {
	out := make([]CRMSpec, 0, len(cs))
	var notes []Note
	for i, c := range cs {
		path := fmt.Sprintf("crm_connections[%d]", i)
		kind := crm.Kind(c.Kind)
		spec := CRMSpec{
			Kind: kind, Name: c.Name, SecretEnv: c.SecretEnv, APITokenEnv: c.APITokenEnv, LeadIDProperty: c.LeadIDProperty,
			StageIDs: map[string]string{}, URL: strings.TrimRight(publicURL, "/") + crm.HookPath(c.Kind, c.Token),
		}
		if spec.SecretEnv == "" {
			spec.SecretEnv = suggest(SuggestedCRMSecretEnv(kind, c.Name))
			saved := "the secret was saved in the web UI"
			if c.SecretSealed == "" {
				saved = "the connection has no secret yet"
			}
			notes = append(notes, Note{Path: path + ".secret_env", Message: fmt.Sprintf(
				"%s; %s is a suggested name: set it to the secret wherever this file is applied", saved, spec.SecretEnv)})
		}
		// An API token named by a file but not read yet keeps its name.
		if c.APITokenSealed != "" && spec.APITokenEnv == "" {
			spec.APITokenEnv = suggest(SuggestedCRMAPITokenEnv(kind, c.Name))
			notes = append(notes, Note{Path: path + ".api_token_env", Message: fmt.Sprintf(
				"the API token was saved in the web UI; %s is a suggested name: set it to the token wherever this file is applied", spec.APITokenEnv)})
		}
		if kind == crm.Generic {
			fields, ok := crm.StoredFields(c.Fields)
			if !ok {
				return nil, nil, fmt.Errorf("crm connection %q has an unreadable field mapping", c.Name)
			}
			spec.Fields = fields
		}
		table, err := s.CRMStages(ctx, c.AccountID, c.ID)
		if err != nil {
			return nil, nil, err
		}
		for _, row := range crm.WithStatusStages(kind, table) {
			if row.Stage != "" {
				spec.StageIDs[row.CRMStageID] = row.Stage
			}
		}
		out = append(out, spec)
	}
	return out, notes, nil
}
