package crm

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// HubSpotAPI reads deals, contacts and pipelines from HubSpot's CRM API
// with a private app's (or OAuth) token.
type HubSpotAPI struct {
	// BaseURL is HubSpotAPIURL when empty.
	BaseURL string
	Token   string
	// HTTP is a client with a 10 s timeout when nil.
	HTTP *http.Client
}

func (h HubSpotAPI) api() api {
	return api{baseURL: h.BaseURL, defaultURL: HubSpotAPIURL, client: h.HTTP, token: h.Token,
		auth:         func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+h.Token) },
		errorMessage: errorField("message")}
}

// Deal is the deal's stage, amount and currency, and its associated
// contacts in HubSpot's order.
func (h HubSpotAPI) Deal(ctx context.Context, id string) (Deal, error) {
	if id == "" {
		return Deal{}, &APIError{Msg: "HubSpot deal: " + errNoID.Error()}
	}
	var r struct {
		Properties struct {
			DealStage scalar `json:"dealstage"`
			Amount    scalar `json:"amount"`
			Currency  scalar `json:"deal_currency_code"`
		} `json:"properties"`
		Associations struct {
			Contacts struct {
				Results []struct {
					ID scalar `json:"id"`
				} `json:"results"`
			} `json:"contacts"`
		} `json:"associations"`
	}
	path := "/crm/v3/objects/deals/" + url.PathEscape(id) + "?properties=dealstage,amount,deal_currency_code&associations=contacts"
	if err := h.api().get(ctx, path, "HubSpot deal "+id, &r); err != nil {
		return Deal{}, err
	}
	// An amount that is not a number is no amount.
	value, _ := parseValue(string(r.Properties.Amount))
	d := Deal{StageID: string(r.Properties.DealStage), Value: value, Currency: string(r.Properties.Currency)}
	// A contact associated with several labels is listed once per label.
	for _, c := range r.Associations.Contacts.Results {
		if c.ID != "" && !slices.Contains(d.Contacts, string(c.ID)) {
			d.Contacts = append(d.Contacts, string(c.ID))
		}
	}
	return d, nil
}

// Contact is what the contact knows of a lead: its email, its phone (else
// its mobile phone) and, when leadIDProperty names one of its properties,
// that property's value as Meta's lead id.
func (h HubSpotAPI) Contact(ctx context.Context, id, leadIDProperty string) (LeadRef, error) {
	if id == "" {
		return LeadRef{}, &APIError{Msg: "HubSpot contact: " + errNoID.Error()}
	}
	props := "email,phone,mobilephone"
	if leadIDProperty != "" {
		props += "," + leadIDProperty
	}
	var r struct {
		Properties map[string]scalar `json:"properties"`
	}
	path := "/crm/v3/objects/contacts/" + url.PathEscape(id) + "?" + url.Values{"properties": {props}}.Encode()
	if err := h.api().get(ctx, path, "HubSpot contact "+id, &r); err != nil {
		return LeadRef{}, err
	}
	p := r.Properties
	ref := LeadRef{Email: string(p["email"]), Phone: string(cmp.Or(p["phone"], p["mobilephone"]))}
	if leadIDProperty != "" {
		ref.MetaLeadID = string(p[leadIDProperty])
	}
	return ref, nil
}

// Stages lists the stages of every deal pipeline, pipeline by pipeline in
// HubSpot's order, each pipeline's stages by their display order.
func (h HubSpotAPI) Stages(ctx context.Context) ([]Stage, error) {
	var r struct {
		Results []struct {
			Label  string `json:"label"`
			Stages []struct {
				ID           scalar `json:"id"`
				Label        string `json:"label"`
				DisplayOrder int    `json:"displayOrder"`
			} `json:"stages"`
		} `json:"results"`
	}
	if err := h.api().get(ctx, "/crm/v3/pipelines/deals", "HubSpot's deal pipelines", &r); err != nil {
		return nil, err
	}
	var stages []Stage
	for _, p := range r.Results {
		start := len(stages)
		for _, s := range p.Stages {
			stages = append(stages, Stage{ID: string(s.ID), Label: strings.TrimSpace(s.Label), Pipeline: strings.TrimSpace(p.Label), Order: s.DisplayOrder})
		}
		slices.SortStableFunc(stages[start:], func(a, b Stage) int { return cmp.Compare(a.Order, b.Order) })
	}
	return stages, nil
}
