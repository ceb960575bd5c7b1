package setup

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/internal/name"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// CRMSpec is one CRM connection of the account (docs/crm.md), found by its
// kind and name, ignoring the name's case: a connection keeps its hook URL
// for as long as it keeps its kind and name. Its secrets are given as the
// names of the environment variables that hold them.
type CRMSpec struct {
	Kind crm.Kind `json:"kind"`
	Name string   `json:"name"`
	// SecretEnv holds the HubSpot app's client secret, the Pipedrive Basic
	// Auth password, or the generic signing (or bearer) secret.
	SecretEnv string `json:"secret_env,omitempty"`
	// APITokenEnv holds the CRM's API token (HubSpot and Pipedrive), which
	// looks contacts and pipelines up.
	APITokenEnv    string `json:"api_token_env,omitempty"`
	LeadIDProperty string `json:"lead_id_property,omitempty"`
	// StageIDs, when present (not nil), maps each CRM stage id to the
	// account's stage, and unmaps the ids of the connection's stage table
	// it leaves out. Absent (nil), the table is kept.
	StageIDs map[string]string `json:"stage_ids,omitzero"`
	// Fields is a generic connection's mapping of targets (a lead key,
	// stage, occurred_at, value, currency, change_id, object_id) to dotted
	// paths in what it posts; nil for HubSpot and Pipedrive.
	Fields map[string]string `json:"fields,omitzero"`
	// URL is the connection's hook URL, which export writes for people to
	// copy into their CRM; apply ignores it.
	URL string `json:"url,omitempty"`
}

// maxCRMStageIDs bounds the stage ids of one connection; a CRM's pipelines
// have a few dozen stages.
const maxCRMStageIDs = 500

// maxCRMStageIDLen bounds a CRM stage id; HubSpot's and Pipedrive's are
// short words and numbers.
const maxCRMStageIDLen = 200

func (d *decoder) crmConnections(path string, raw json.RawMessage) []CRMSpec {
	if isNull(raw) {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		d.add(path, "must be a list of CRM connections, not "+kind(raw))
		return nil
	}
	if len(items) > store.MaxCRMConnections {
		d.add(path, fmt.Sprintf("use at most %d CRM connections, not %d", store.MaxCRMConnections, len(items)))
		return nil
	}
	out := make([]CRMSpec, len(items))
	for i, item := range items {
		c := &out[i]
		p := fmt.Sprintf("%s[%d]", path, i)
		var stageIDs, fields json.RawMessage
		d.fields(p, item, `must be an object like {"kind": "hubspot", "name": "Sales", "secret_env": "HUBSPOT_SECRET_SALES", "api_token_env": "HUBSPOT_API_TOKEN_SALES"}`, []field{
			{"kind", &c.Kind, "a string: hubspot, pipedrive or generic"},
			{"name", &c.Name, "a string"},
			{"secret_env", &c.SecretEnv, "a string: the name of an environment variable"},
			{"api_token_env", &c.APITokenEnv, "a string: the name of an environment variable"},
			{"lead_id_property", &c.LeadIDProperty, "a string: the CRM contact property that holds Meta's lead id"},
			{"stage_ids", &stageIDs, "an object"},
			{"fields", &fields, "an object"},
			{"url", &c.URL, "a string: the hook URL export writes, which apply ignores"},
		})
		c.StageIDs = d.stringMap(join(p, "stage_ids"), stageIDs,
			`must be an object of CRM stage ids and the account's stages, like {"appointmentscheduled": "booked", "closedwon": "won"}`)
		c.Fields = d.stringMap(join(p, "fields"), fields,
			`must be an object of targets and dotted paths, like {"email": "contact.email", "stage": "deal.stage"}`)
	}
	return out
}

// stringMap reads an object whose values are strings: nil when raw is
// absent or null, an empty map for {}.
func (d *decoder) stringMap(path string, raw json.RawMessage, notObject string) map[string]string {
	if raw == nil || isNull(raw) {
		return nil
	}
	ms, ok := d.object(path, raw, notObject)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(ms))
	for _, m := range ms {
		p := join(path, m.key)
		var v string
		switch err := json.Unmarshal(m.value, &v); {
		case err != nil:
			d.add(p, "must be a string, not "+kind(m.value))
		case mangled(m.value, v):
			d.add(p, notUTF8)
		case strings.ContainsRune(m.key, 0):
			d.add(path, `a key contains a NUL character (\u0000); remove it`)
		case strings.ContainsRune(v, 0):
			d.add(p, `contains a NUL character (\u0000); remove it`)
		default:
			out[m.key] = v
		}
	}
	return out
}

// cleanCRM trims the connections' strings; nil stays nil (absent). The
// keys of stage_ids and fields are kept as written (validation refuses
// spaces around them), so two never become one.
func cleanCRM(cs []CRMSpec) []CRMSpec {
	if cs == nil {
		return nil
	}
	t := strings.TrimSpace
	out := make([]CRMSpec, len(cs))
	for i, c := range cs {
		c.Kind = crm.Kind(t(string(c.Kind)))
		c.Name, c.SecretEnv, c.APITokenEnv, c.LeadIDProperty, c.URL = t(c.Name), t(c.SecretEnv), t(c.APITokenEnv), t(c.LeadIDProperty), t(c.URL)
		c.StageIDs, c.Fields = trimValues(c.StageIDs), trimValues(c.Fields)
		out[i] = c
	}
	return out
}

func trimValues(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = strings.TrimSpace(v)
	}
	return out
}

// crmKey identifies a connection in its account: its kind and its name,
// ignoring case.
func crmKey(kind crm.Kind, connName string) string {
	return string(kind) + "\x00" + strings.ToLower(connName)
}

// readCRM reads the account's connections into k, by crmKey.
func (k *known) readCRM(ctx context.Context, tx *store.Store, accountID int64) error {
	cs, err := tx.CRMConnections(ctx, accountID)
	if err != nil {
		return err
	}
	for _, c := range cs {
		k.crm[crmKey(crm.Kind(c.Kind), c.Name)] = c
	}
	return nil
}

// crmConnection finds the account's connection of that kind and name,
// ignoring case; never on a nil k.
func (k *known) crmConnection(kind crm.Kind, connName string) (models.CRMConnection, bool) {
	if k == nil {
		return models.CRMConnection{}, false
	}
	c, ok := k.crm[crmKey(kind, connName)]
	return c, ok
}

// crmStages lists the stages a connection's stage_ids may name: the
// account's, then those the file's stages and stage mappings add (they
// apply first); nil when k is nil (nothing known of the account).
func (f File) crmStages(k *known) []string {
	if k == nil {
		return nil
	}
	var out []string
	has := func(s string) bool {
		return slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, s) })
	}
	for _, s := range k.stages {
		out = append(out, s.Name)
	}
	for _, s := range f.Stages {
		if s.Name != "" && !has(s.Name) {
			out = append(out, s.Name)
		}
	}
	for _, m := range f.StageMappings {
		if m.Stage != "" && !has(m.Stage) {
			out = append(out, m.Stage)
		}
	}
	return out
}

// crmProblems lists the problems of the clean file's CRM connections, with
// what the database knows of the account (k, nil when nothing: then the
// checks that need it, whether a connection is new and which stages the
// account has, wait for Apply). getenv looks the secrets up (nil: an
// upload in the web UI, which reads none).
func (f File) crmProblems(getenv func(string) string, k *known) []Problem {
	var ps []Problem
	add := func(path, format string, args ...any) {
		ps = append(ps, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if len(f.CRMConnections) > store.MaxCRMConnections {
		add("crm_connections", "use at most %d CRM connections, not %d", store.MaxCRMConnections, len(f.CRMConnections))
		return ps
	}
	stages := f.crmStages(k)
	first := map[string]int{}
	for i, c := range f.CRMConnections {
		p := fmt.Sprintf("crm_connections[%d]", i)
		switch {
		case c.Kind == "":
			add(p+".kind", "required: hubspot, pipedrive or generic")
		case !c.Kind.Valid():
			add(p+".kind", "%q is not a kind of CRM connection; use hubspot, pipedrive or generic", c.Kind)
		}
		if msg := name.Problem(c.Name); msg != "" {
			add(p+".name", "%s", msg)
		} else if j, ok := first[crmKey(c.Kind, c.Name)]; ok {
			add(p+".name", "%q is also the name of crm_connections[%d] of kind %s; a connection is known by its kind and name, which must differ (ignoring case)", c.Name, j, c.Kind)
		} else {
			first[crmKey(c.Kind, c.Name)] = i
		}
		_, found := k.crmConnection(c.Kind, c.Name)
		isNew := k != nil && !found
		switch {
		case c.SecretEnv != "":
			if msg := secretEnvProblem(c.SecretEnv, getenv); msg != "" {
				add(p+".secret_env", "%s", msg)
			} else if getenv != nil {
				if msg := crm.SecretTooShort(strings.TrimSpace(getenv(c.SecretEnv))); msg != "" {
					add(p+".secret_env", "environment variable %s: %s", c.SecretEnv, msg)
				}
			}
		case isNew && c.Kind.Valid():
			add(p+".secret_env", "required for a new connection: the name of the environment variable that holds %s, like %s",
				secretWhat(c.Kind), SuggestedCRMSecretEnv(c.Kind, c.Name))
		}
		switch {
		case c.Kind == crm.Generic && c.APITokenEnv != "":
			add(p+".api_token_env", "a generic connection calls no CRM API, so it takes no API token; remove api_token_env")
		case c.APITokenEnv != "":
			if msg := secretEnvProblem(c.APITokenEnv, getenv); msg != "" {
				add(p+".api_token_env", "%s", msg)
			}
		case isNew && (c.Kind == crm.HubSpot || c.Kind == crm.Pipedrive):
			add(p+".api_token_env", "required for a new %s connection: the name of the environment variable that holds %s, like %s",
				c.Kind.Title(), apiTokenWhat(c.Kind), SuggestedCRMAPITokenEnv(c.Kind, c.Name))
		}
		if msg := propertyProblem(c.LeadIDProperty); msg != "" {
			add(p+".lead_id_property", "%s", msg)
		}
		ps = append(ps, stageIDProblems(p+".stage_ids", c.StageIDs, stages)...)
		switch {
		case c.Kind != crm.Generic && len(c.Fields) > 0:
			if c.Kind.Valid() {
				add(p+".fields", "only a generic connection maps fields: %s deliveries have their own shape; remove fields", c.Kind.Title())
			}
		case c.Fields != nil:
			if err := crm.CheckFields(c.Fields); err != nil {
				add(p+".fields", "%s", err.Error())
			}
		}
	}
	return ps
}

// stageIDProblems checks a connection's stage_ids: at most
// maxCRMStageIDs, each id a short key without invisible characters or
// spaces around it, each stage one of stages (any stage's name when
// stages is nil: the account is not known yet).
func stageIDProblems(path string, ids map[string]string, stages []string) []Problem {
	var ps []Problem
	add := func(path, format string, args ...any) {
		ps = append(ps, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if len(ids) > maxCRMStageIDs {
		add(path, "use at most %d stage ids, not %d", maxCRMStageIDs, len(ids))
		return ps
	}
	keys := make([]string, 0, len(ids))
	for id := range ids {
		keys = append(keys, id)
	}
	slices.Sort(keys)
	for _, id := range keys {
		p, stage := join(path, id), ids[id]
		switch {
		case strings.TrimSpace(id) == "":
			add(path, "a CRM stage id must not be empty")
			continue
		case utf8.RuneCountInString(id) > maxCRMStageIDLen:
			add(path, "a CRM stage id has at most %d characters; one has %d", maxCRMStageIDLen, utf8.RuneCountInString(id))
			continue
		case strings.TrimSpace(id) != id:
			add(p, "remove the spaces around the CRM stage id")
			continue
		case strings.IndexFunc(id, name.Invisible) >= 0:
			add(path, "a CRM stage id holds an invisible character; remove it")
			continue
		}
		switch msg := name.StageProblem(stage); {
		case stage == "":
			add(p, "required: the account's stage this CRM stage means, like won; leave the id out to leave it unmapped")
		case msg != "":
			add(p, "%s", msg)
		case stages != nil && !slices.ContainsFunc(stages, func(s string) bool { return strings.EqualFold(s, stage) }):
			add(p, "%q is not a stage of the account; its stages are %s (a stage mapping of the file adds its stage)",
				stage, strings.Join(quoteAll(stages), ", "))
		}
	}
	return ps
}

// propertyProblem says what is wrong with a lead id property, or "" (none
// is fine).
func propertyProblem(p string) string {
	if !crm.ValidLeadIDProperty(p) {
		return "write the property's internal name or key, like meta_lead_id: at most 100 letters, digits, _ . and -"
	}
	return ""
}

// secretWhat says which secret a connection's secret_env holds.
func secretWhat(k crm.Kind) string {
	switch k {
	case crm.HubSpot:
		return "the HubSpot app's client secret, which signs its webhooks"
	case crm.Pipedrive:
		return "the password Pipedrive's webhook sends (Basic Auth, user leadsignal)"
	}
	return "the secret the sender signs with (or sends as a bearer token)"
}

// apiTokenWhat says which token a connection's api_token_env holds.
func apiTokenWhat(k crm.Kind) string {
	if k == crm.HubSpot {
		return "the HubSpot private app's access token, which looks up the deal's contact and lists the pipelines' stages"
	}
	return "the Pipedrive API token, which looks up the deal's person and lists the pipelines' stages"
}

// SuggestedCRMSecretEnv is the environment variable name export proposes
// for a connection's secret when none is known: <KIND>_SECRET_<NAME>.
func SuggestedCRMSecretEnv(k crm.Kind, connName string) string {
	return strings.ToUpper(string(k)) + "_SECRET_" + upperSnake(connName)
}

// SuggestedCRMAPITokenEnv is the same for its API token:
// <KIND>_API_TOKEN_<NAME>.
func SuggestedCRMAPITokenEnv(k crm.Kind, connName string) string {
	return strings.ToUpper(string(k)) + "_API_TOKEN_" + upperSnake(connName)
}
