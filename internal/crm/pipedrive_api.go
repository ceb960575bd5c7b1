package crm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
)

// PipedriveAPI reads deals, persons and stages from Pipedrive's API v2
// with a user's API token.
type PipedriveAPI struct {
	// BaseURL is PipedriveAPIURL when empty (a company domain such as
	// https://acme.pipedrive.com works too).
	BaseURL string
	Token   string
	// HTTP is a client with a 10 s timeout when nil.
	HTTP *http.Client
}

// pipedriveMaxPages bounds the pages of a list read (500 items each).
const pipedriveMaxPages = 20

func (p PipedriveAPI) api() api {
	return api{baseURL: p.BaseURL, defaultURL: PipedriveAPIURL, client: p.HTTP, token: p.Token,
		auth:         func(r *http.Request) { r.Header.Set("x-api-token", p.Token) },
		errorMessage: errorField("error")}
}

// Deal is the deal's stage, value and currency, and its person as its
// one contact.
func (p PipedriveAPI) Deal(ctx context.Context, id string) (Deal, error) {
	if id == "" {
		return Deal{}, &APIError{Msg: "Pipedrive deal: " + errNoID.Error()}
	}
	var r struct {
		Data struct {
			StageID  scalar `json:"stage_id"`
			Value    scalar `json:"value"`
			Currency scalar `json:"currency"`
			PersonID scalar `json:"person_id"`
		} `json:"data"`
	}
	if err := p.api().get(ctx, "/api/v2/deals/"+url.PathEscape(id), "Pipedrive deal "+id, &r); err != nil {
		return Deal{}, err
	}
	value, _ := parseValue(string(r.Data.Value))
	d := Deal{StageID: string(r.Data.StageID), Value: value, Currency: string(r.Data.Currency)}
	if r.Data.PersonID != "" {
		d.Contacts = []string{string(r.Data.PersonID)}
	}
	return d, nil
}

// pipedriveContact is one of a person's emails or phones.
type pipedriveContact struct {
	Value   string `json:"value"`
	Primary bool   `json:"primary"`
}

// primary is the primary one's value, else the first's.
func primary(cs []pipedriveContact) string {
	for _, c := range cs {
		if c.Primary && c.Value != "" {
			return c.Value
		}
	}
	for _, c := range cs {
		if c.Value != "" {
			return c.Value
		}
	}
	return ""
}

// Person is what the person knows of a lead: its primary (else first)
// email and phone, and, when leadIDField names one of its custom fields
// (by its key), that field's value as Meta's lead id.
func (p PipedriveAPI) Person(ctx context.Context, id, leadIDField string) (LeadRef, error) {
	if id == "" {
		return LeadRef{}, &APIError{Msg: "Pipedrive person: " + errNoID.Error()}
	}
	var r struct {
		Data struct {
			Emails       []pipedriveContact         `json:"emails"`
			Phones       []pipedriveContact         `json:"phones"`
			CustomFields map[string]json.RawMessage `json:"custom_fields"`
		} `json:"data"`
	}
	if err := p.api().get(ctx, "/api/v2/persons/"+url.PathEscape(id), "Pipedrive person "+id, &r); err != nil {
		return LeadRef{}, err
	}
	ref := LeadRef{Email: primary(r.Data.Emails), Phone: primary(r.Data.Phones)}
	if raw, ok := r.Data.CustomFields[leadIDField]; ok && leadIDField != "" {
		// A string, a number or {"value": ...}; anything else is no id.
		var s scalar
		if json.Unmarshal(bytes.TrimSpace(raw), &s) == nil {
			ref.MetaLeadID = string(s)
		}
	}
	return ref, nil
}

// Stages lists the stages of every pipeline, pipeline by pipeline in
// Pipedrive's order, each pipeline's stages by their order_nr.
func (p PipedriveAPI) Stages(ctx context.Context) ([]Stage, error) {
	type pipeline struct {
		ID   scalar `json:"id"`
		Name string `json:"name"`
	}
	type stage struct {
		ID         scalar `json:"id"`
		Name       string `json:"name"`
		PipelineID scalar `json:"pipeline_id"`
		OrderNr    int    `json:"order_nr"`
	}
	pipelines, err := pipedriveList[pipeline](ctx, p.api(), "/api/v2/pipelines", "Pipedrive's pipelines")
	if err != nil {
		return nil, err
	}
	raw, err := pipedriveList[stage](ctx, p.api(), "/api/v2/stages", "Pipedrive's stages")
	if err != nil {
		return nil, err
	}
	// A stage of a pipeline not listed (it was added between the two
	// reads) comes last.
	rank := func(id scalar) int {
		if i := slices.IndexFunc(pipelines, func(p pipeline) bool { return p.ID == id }); i >= 0 {
			return i
		}
		return len(pipelines)
	}
	slices.SortStableFunc(raw, func(a, b stage) int {
		return cmp.Or(cmp.Compare(rank(a.PipelineID), rank(b.PipelineID)), cmp.Compare(a.OrderNr, b.OrderNr))
	})
	stages := make([]Stage, len(raw))
	for i, s := range raw {
		name := ""
		if r := rank(s.PipelineID); r < len(pipelines) {
			name = pipelines[r].Name
		}
		stages[i] = Stage{ID: string(s.ID), Label: s.Name, Pipeline: name, Order: s.OrderNr}
	}
	return stages, nil
}

// pipedriveList reads every page of a v2 list (cursor pagination).
func pipedriveList[T any](ctx context.Context, a api, path, what string) ([]T, error) {
	var all []T
	cursor := ""
	for range pipedriveMaxPages {
		q := url.Values{"limit": {"500"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var r struct {
			Data           []T `json:"data"`
			AdditionalData struct {
				NextCursor string `json:"next_cursor"`
			} `json:"additional_data"`
		}
		if err := a.get(ctx, path+"?"+q.Encode(), what, &r); err != nil {
			return nil, err
		}
		all = append(all, r.Data...)
		if cursor = r.AdditionalData.NextCursor; cursor == "" {
			return all, nil
		}
	}
	return all, nil
}
