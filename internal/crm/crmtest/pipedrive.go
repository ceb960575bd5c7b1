package crmtest

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"testing"
)

// PipedriveFake is Pipedrive's API v2 for the calls crm.PipedriveAPI
// makes: GET /api/v2/deals/{id}, /api/v2/persons/{id}, /api/v2/stages and
// /api/v2/pipelines (cursor-paginated), with an x-api-token header. Its
// methods are safe to call while it serves.
type PipedriveFake struct {
	server
	deals     map[string]map[string]any
	persons   map[string]map[string]any
	pipelines []map[string]any
	stageList []map[string]any
}

// NewPipedrive starts a fake Pipedrive API that takes token, closed when t
// ends.
func NewPipedrive(t testing.TB, token string) *PipedriveFake {
	f := &PipedriveFake{deals: map[string]map[string]any{}, persons: map[string]map[string]any{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v2/deals/{id}", func(w http.ResponseWriter, r *http.Request) { f.one(w, r, f.deals, "Deal") })
	mux.HandleFunc("GET /api/v2/persons/{id}", func(w http.ResponseWriter, r *http.Request) { f.one(w, r, f.persons, "Person") })
	mux.HandleFunc("GET /api/v2/stages", func(w http.ResponseWriter, r *http.Request) { f.list(w, r, &f.stageList) })
	mux.HandleFunc("GET /api/v2/pipelines", func(w http.ResponseWriter, r *http.Request) { f.list(w, r, &f.pipelines) })
	f.start(t, func(r *http.Request) bool { return r.Header.Get("x-api-token") == token }, mux)
	return f
}

// nullable is id, or null when 0.
func nullable(id int) any {
	if id == 0 {
		return nil
	}
	return id
}

// AddDeal adds (or replaces) a deal at stageID with its value, currency
// and person (0 for none).
func (f *PipedriveFake) AddDeal(id, stageID int, value float64, currency string, personID int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deals[strconv.Itoa(id)] = map[string]any{"id": id, "stage_id": stageID, "value": value, "currency": currency,
		"person_id": nullable(personID), "status": "open"}
}

// AddPerson adds (or replaces) a person with one email and one phone
// ("" for none), both primary, and its custom fields by key (a value, or
// {"value": ...} as Pipedrive types some).
func (f *PipedriveFake) AddPerson(id int, email, phone string, custom map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	list := func(v string) []map[string]any {
		if v == "" {
			return []map[string]any{}
		}
		return []map[string]any{{"value": v, "primary": true, "label": "work"}}
	}
	custom = maps.Clone(custom)
	if custom == nil {
		custom = map[string]any{}
	}
	f.persons[strconv.Itoa(id)] = map[string]any{"id": id, "name": "Person " + strconv.Itoa(id),
		"emails": list(email), "phones": list(phone), "custom_fields": custom}
}

// AddStage adds a stage at the end of a pipeline, adding the pipeline
// after the others when it is new.
func (f *PipedriveFake) AddStage(pipelineID int, pipelineName string, stageID int, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.ContainsFunc(f.pipelines, func(p map[string]any) bool { return p["id"] == pipelineID }) {
		f.pipelines = append(f.pipelines, map[string]any{"id": pipelineID, "name": pipelineName, "order_nr": len(f.pipelines) + 1})
	}
	order := 1
	for _, s := range f.stageList {
		if s["pipeline_id"] == pipelineID {
			order++
		}
	}
	f.stageList = append(f.stageList, map[string]any{"id": stageID, "name": name, "pipeline_id": pipelineID, "order_nr": order})
}

func (f *PipedriveFake) one(w http.ResponseWriter, r *http.Request, of map[string]map[string]any, what string) {
	f.mu.Lock()
	v, ok := of[r.PathValue("id")]
	f.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"success": false, "error": what + " not found", "error_info": "Please check developers.pipedrive.com"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "data": v})
}

// list answers a page of items: limit (default 100, at most 500) from the
// cursor on, with the next page's cursor when there is one.
func (f *PipedriveFake) list(w http.ResponseWriter, r *http.Request, items *[]map[string]any) {
	limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || limit <= 0 {
		limit = 100
	}
	limit = min(limit, 500)
	from := 0
	if c := r.URL.Query().Get("cursor"); c != "" {
		if from, err = strconv.Atoi(c); err != nil || from < 0 {
			writeJSON(w, http.StatusBadRequest, map[string]any{"success": false, "error": "invalid cursor"})
			return
		}
	}
	f.mu.Lock()
	all := *items
	page := all[min(from, len(all)):min(from+limit, len(all))]
	next := any(nil)
	if from+limit < len(all) {
		next = strconv.Itoa(from + limit)
	}
	body := map[string]any{"success": true, "data": page, "additional_data": map[string]any{"next_cursor": next}}
	f.mu.Unlock()
	if len(page) == 0 {
		body["data"] = []any{}
	}
	writeJSON(w, http.StatusOK, body)
}
