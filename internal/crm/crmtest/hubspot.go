package crmtest

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// HubSpotFake is HubSpot's CRM API for the calls crm.HubSpotAPI makes:
// GET /crm/v3/objects/deals/{id}, /crm/v3/objects/contacts/{id} and
// /crm/v3/pipelines/deals, with a Bearer token. Its methods are safe to
// call while it serves.
type HubSpotFake struct {
	server
	deals     map[string]hubspotDeal
	contacts  map[string]map[string]string
	pipelines []hubspotPipeline
}

type hubspotDeal struct {
	stageID, amount, currency string
	contacts                  []string
}

type hubspotPipeline struct {
	id, label string
	stages    [][2]string // id, label
}

// NewHubSpot starts a fake HubSpot API that takes token, closed when t
// ends.
func NewHubSpot(t testing.TB, token string) *HubSpotFake {
	f := &HubSpotFake{deals: map[string]hubspotDeal{}, contacts: map[string]map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /crm/v3/objects/deals/{id}", f.deal)
	mux.HandleFunc("GET /crm/v3/objects/contacts/{id}", f.contact)
	mux.HandleFunc("GET /crm/v3/pipelines/deals", f.stages)
	f.start(t, func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer "+token }, mux)
	return f
}

// AddDeal adds (or replaces) a deal at stageID with amount (a decimal
// string as HubSpot writes it, "" for none) and its associated contacts,
// first first.
func (f *HubSpotFake) AddDeal(id, stageID, amount, currency string, contactIDs ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deals[id] = hubspotDeal{stageID: stageID, amount: amount, currency: currency, contacts: contactIDs}
}

// AddContact adds (or replaces) a contact; props are its other properties
// (mobilephone, a Meta lead id property...).
func (f *HubSpotFake) AddContact(id, email, phone string, props map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := map[string]string{"email": email, "phone": phone}
	for k, v := range props {
		p[k] = v
	}
	f.contacts[id] = p
}

// AddStage adds a stage at the end of a deal pipeline, adding the
// pipeline after the others when it is new.
func (f *HubSpotFake) AddStage(pipelineID, pipelineLabel, stageID, stageLabel string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.IndexFunc(f.pipelines, func(p hubspotPipeline) bool { return p.id == pipelineID })
	if i < 0 {
		f.pipelines = append(f.pipelines, hubspotPipeline{id: pipelineID, label: pipelineLabel})
		i = len(f.pipelines) - 1
	}
	f.pipelines[i].stages = append(f.pipelines[i].stages, [2]string{stageID, stageLabel})
}

func (f *HubSpotFake) notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]any{"status": "error", "message": "resource not found", "category": "OBJECT_NOT_FOUND"})
}

func (f *HubSpotFake) deal(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	f.mu.Lock()
	d, ok := f.deals[id]
	f.mu.Unlock()
	if !ok {
		f.notFound(w)
		return
	}
	body := map[string]any{"id": id, "properties": properties(map[string]string{
		"dealstage": d.stageID, "amount": d.amount, "deal_currency_code": d.currency, "hs_object_id": id,
	}, r.URL.Query().Get("properties"))}
	// HubSpot lists associations only when asked, and only when there
	// are some.
	if slices.Contains(strings.Split(r.URL.Query().Get("associations"), ","), "contacts") && len(d.contacts) > 0 {
		var results []map[string]string
		for _, c := range d.contacts {
			results = append(results, map[string]string{"id": c, "type": "deal_to_contact"})
		}
		body["associations"] = map[string]any{"contacts": map[string]any{"results": results}}
	}
	writeJSON(w, http.StatusOK, body)
}

func (f *HubSpotFake) contact(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	f.mu.Lock()
	c, ok := f.contacts[id]
	f.mu.Unlock()
	if !ok {
		f.notFound(w)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "properties": properties(c, r.URL.Query().Get("properties"))})
}

// properties is what HubSpot answers for the properties asked (a comma
// list): each one's value, null when unset; hs_object_id always.
func properties(all map[string]string, asked string) map[string]any {
	out := map[string]any{"hs_object_id": all["hs_object_id"]}
	for _, p := range strings.Split(asked, ",") {
		if p == "" {
			continue
		}
		if v := all[p]; v != "" {
			out[p] = v
		} else {
			out[p] = nil
		}
	}
	return out
}

func (f *HubSpotFake) stages(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	results := []map[string]any{}
	for i, p := range f.pipelines {
		var stages []map[string]any
		for j, s := range p.stages {
			stages = append(stages, map[string]any{"id": s[0], "label": s[1], "displayOrder": j, "archived": false})
		}
		results = append(results, map[string]any{"id": p.id, "label": p.label, "displayOrder": i, "stages": stages})
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": results})
}
