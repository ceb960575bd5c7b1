// Package crmtest fakes the CRMs for tests: HubSpot's and Pipedrive's APIs
// as httptest servers backed by in-memory records (NewHubSpot,
// NewPipedrive), and the bodies their webhooks deliver (HubSpotDealStage,
// PipedriveV2StageChange, PipedriveV1StageChange). Point crm.HubSpotAPI or
// crm.PipedriveAPI, or the worker's options, at a fake's URL.
package crmtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// server is what both fakes share: the httptest server, the token it
// takes, the down switch and the call count.
type server struct {
	srv   *httptest.Server
	mu    sync.Mutex
	down  bool
	calls int
}

func (s *server) start(t testing.TB, authorized func(*http.Request) bool, mux *http.ServeMux) {
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.calls++
		down := s.down
		s.mu.Unlock()
		switch {
		case down:
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "error", "success": false, "message": "service unavailable", "error": "service unavailable"})
		case !authorized(r):
			writeJSON(w, http.StatusUnauthorized, map[string]any{"status": "error", "success": false, "message": "authentication credentials not valid", "error": "unauthorized access"})
		default:
			mux.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(s.srv.Close)
}

// URL is the fake's base URL (crm.HubSpotAPI.BaseURL,
// crm.PipedriveAPI.BaseURL).
func (s *server) URL() string { return s.srv.URL }

// Down makes the fake answer 503 to every request while down is true.
func (s *server) Down(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// Calls counts the requests the fake received, refused ones included.
func (s *server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
