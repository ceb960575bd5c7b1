package crmsync

import (
	"context"
	"strconv"
	"strings"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// maxContacts bounds the contacts of one deal that are looked up.
const maxContacts = 10

// lookUp is what the CRM knows of the change's person: the delivery's own
// lead keys (generic), else its deal's contacts from the CRM's API, first
// first; and the deal's value and currency when the API gave them.
func (r *round) lookUp(ctx context.Context, c *connection, ch crm.Change) ([]crm.LeadRef, *float64, string, *problem) {
	kind := crm.Kind(c.Kind)
	if kind == crm.Generic {
		if ch.Lead.Empty() {
			return nil, nil, "", &problem{models.WaitingLead, "the delivery names no lead: map a lead key (email, phone, external_id...)"}
		}
		return []crm.LeadRef{ch.Lead}, nil, "", nil
	}
	if c.apiToken == "" {
		return nil, nil, "", &problem{models.WaitingCRM, "no " + kind.Title() + " API token is saved to look the deal's contact up: save one on the connection's page"}
	}
	switch kind {
	case crm.HubSpot:
		api := crm.HubSpotAPI{BaseURL: r.w.o.HubSpotAPIURL, Token: c.apiToken, HTTP: r.w.o.HTTP}
		deal, err := api.Deal(ctx, ch.ObjectID)
		if err != nil {
			return nil, nil, "", apiProblem(kind, err)
		}
		var refs []crm.LeadRef
		for _, id := range deal.Contacts[:min(len(deal.Contacts), maxContacts)] {
			ref, err := api.Contact(ctx, id, c.LeadIDProperty)
			if err != nil {
				return nil, nil, "", apiProblem(kind, err)
			}
			refs = append(refs, ref)
		}
		if len(refs) == 0 {
			return nil, nil, "", &problem{models.WaitingLead, "HubSpot deal " + ch.ObjectID + " has no associated contact yet"}
		}
		return refs, deal.Value, deal.Currency, nil
	default:
		api := crm.PipedriveAPI{BaseURL: r.w.o.PipedriveAPIURL, Token: c.apiToken, HTTP: r.w.o.HTTP}
		person := ch.PersonID
		if person == "" {
			deal, err := api.Deal(ctx, ch.ObjectID)
			if err != nil {
				return nil, nil, "", apiProblem(kind, err)
			}
			if len(deal.Contacts) > 0 {
				person = deal.Contacts[0]
			}
		}
		if person == "" {
			return nil, nil, "", &problem{models.WaitingLead, "Pipedrive deal " + ch.ObjectID + " has no person yet"}
		}
		ref, err := api.Person(ctx, person, c.LeadIDProperty)
		if err != nil {
			return nil, nil, "", apiProblem(kind, err)
		}
		return []crm.LeadRef{ref}, nil, "", nil
	}
}

// leadKeys are the keys of the account's lead of refs, in the order they
// are tried: leadsignal's lead id, then external id, then Meta's lead id,
// then email, then phone, each over the contacts in order.
func leadKeys(acc *models.Account, refs []crm.LeadRef) []store.LeadKey {
	var keys []store.LeadKey
	add := func(field, value string) {
		// A NUL character is in no lead (Postgres keeps none in text),
		// and would fail the account's whole look-up there.
		if value = strings.TrimSpace(value); value != "" && len(value) <= 500 && !strings.ContainsRune(value, 0) {
			keys = append(keys, store.LeadKey{Field: field, Value: value})
		}
	}
	for _, ref := range refs {
		if id, err := strconv.ParseInt(strings.TrimSpace(ref.ID), 10, 64); err == nil && id > 0 {
			add("id", strconv.FormatInt(id, 10))
		}
	}
	for _, ref := range refs {
		add("external_id", ref.ExternalID)
	}
	for _, ref := range refs {
		add("meta_lead_id", ref.MetaLeadID)
	}
	for _, ref := range refs {
		if ref.Email != "" {
			add("email", normalize.Normalize(normalize.Input{Email: ref.Email}).Email.Hash)
		}
	}
	for _, ref := range refs {
		if ref.Phone != "" {
			add("phone", normalize.Normalize(normalize.Input{Phone: ref.Phone, DefaultCountry: acc.DefaultCountry}).Phone.Hash)
		}
	}
	return keys
}

// describe names what a lead was looked up by, for a person reading the
// delivery's reason on the connection's page.
func describe(refs []crm.LeadRef) string {
	var parts []string
	for _, ref := range refs {
		for _, p := range []struct{ what, v string }{
			{"lead id", ref.ID}, {"external id", ref.ExternalID}, {"Meta lead id", ref.MetaLeadID},
			{"email", ref.Email}, {"phone", ref.Phone},
		} {
			if v := strings.TrimSpace(p.v); v != "" && len(parts) < 4 {
				parts = append(parts, p.what+" "+v)
			}
		}
	}
	if len(parts) == 0 {
		return "the contact (it has no email, phone or lead id)"
	}
	return strings.Join(parts, " or ")
}
