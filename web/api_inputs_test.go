package web_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestIngestRefusesNUL: a NUL character, which Postgres cannot store in
// text, is a 400 naming the field on both databases, and nothing is stored.
func TestIngestRefusesNUL(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		tests := []struct {
			name  string
			body  string
			field string
		}{
			{"zip", `{"email":"a@example.com","zip":"ZIP\u0000123"}`, "zip"},
			{"first name", `{"email":"a@example.com","first_name":"\u0000Jane"}`, "first_name"},
			{"email", `{"email":"a@example.com\u0000"}`, "email"},
			{"message", `{"email":"a@example.com","message":"hello\u0000"}`, "message"},
			{"external id", `{"external_id":"form\u00001"}`, "external_id"},
			{"event source url", `{"email":"a@example.com","event_source_url":"https://example.com/\u0000"}`, "event_source_url"},
			{"custom field value", `{"email":"a@example.com","fields":{"note":"a\u0000b"}}`, "fields.note"},
			{"custom field name", `{"email":"a@example.com","fields":{"no\u0000te":"a"}}`, "fields"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := a.postLead(key, tt.body)
				if r.status != http.StatusBadRequest || r.Error.Code != "invalid_character" || r.Error.Field != tt.field || r.Error.Message == "" {
					t.Errorf("= %d %s; want 400 invalid_character field %q", r.status, r.raw, tt.field)
				}
			})
		}
		if n := a.leadCount(acc); n != 0 {
			t.Errorf("refused requests stored %d leads", n)
		}
	})
}

// TestIngestStripsInvisibleCharacters: control and bidi characters are
// gone from the stored lead, its lead page and the CSV export; a message
// keeps its lines.
func TestIngestStripsInvisibleCharacters(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		r := a.postLead(key, `{"external_id":"\u202eform-7","email":"jane\u200e@example.com",
			"first_name":"Ja\u0001ne","last_name":"\u202eeoD","city":"New\nYork","zip":"\u206610001\u2069",
			"message":"Hi\u0007,\r\n\tcall me\u001b[2J\rtomorrow","fields":{"note\u200f":"call\u0085 me\u202e"}}`)
		if r.status != http.StatusCreated {
			t.Fatalf("post = %d %s", r.status, r.raw)
		}
		l, err := s.Lead(t.Context(), acc.ID, r.LeadID)
		if err != nil {
			t.Fatal(err)
		}
		got := []string{*l.ExternalID, l.Email, l.FirstName, l.LastName, l.City, l.Zip, l.Message, l.Fields}
		want := []string{"form-7", "jane@example.com", "Jane", "eoD", "New York", "10001", "Hi,\n\tcall me[2J\ntomorrow", `{"note":"call me"}`}
		if !slices.Equal(got, want) {
			t.Errorf("stored %q;\nwant %q", got, want)
		}
		var keys normalize.Keys
		if err := json.Unmarshal([]byte(l.MatchKeys), &keys); err != nil {
			t.Fatal(err)
		}
		if keys.Email.Normalized != "jane@example.com" || keys.Zip.Normalized != "10001" {
			t.Errorf("em %+v zp %+v; want the cleaned values", keys.Email, keys.Zip)
		}

		b := a.browser()
		b.login("acme-owner@example.com")
		base := fmt.Sprintf("/accounts/%d", acc.ID)
		page := b.get(fmt.Sprintf("%s/leads/%d", base, r.LeadID))
		wantStatus(t, "lead page", page, http.StatusOK)
		export := b.get(base + "/leads.csv")
		wantStatus(t, "CSV export", export, http.StatusOK)
		for what, body := range map[string]string{"lead page": page.body, "CSV": export.body} {
			if i := strings.IndexFunc(body, func(r rune) bool {
				return r == '\u202e' || r == '\u200e' || r == '\u200f' || r == '\u2066' || r == '\u0001' || r == '\u0007' || r == '\u001b' || r == '\u0085'
			}); i >= 0 {
				t.Errorf("%s has an invisible character at byte %d: %q", what, i, body[max(0, i-20):min(len(body), i+20)])
			}
		}
		recs, err := csv.NewReader(strings.NewReader(export.body)).ReadAll()
		if err != nil || len(recs) != 2 || !slices.Contains(recs[1], "Hi,\n\tcall me[2J\ntomorrow") {
			t.Errorf("CSV = %q, %v; want the lead with its cleaned message", recs, err)
		}
	})
}

func TestIngestExternalIDLimit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		r := a.postLead(key, `{"external_id":"`+strings.Repeat("x", 40000)+`"}`)
		if r.status != http.StatusUnprocessableEntity || r.Error.Code != "invalid_field" || r.Error.Field != "external_id" ||
			!strings.Contains(r.Error.Message, "500 bytes") {
			t.Errorf("40,000-character external_id = %d %s; want 422 invalid_field external_id stating 500 bytes", r.status, r.raw)
		}
		if n := a.leadCount(acc); n != 0 {
			t.Errorf("refused request stored %d leads", n)
		}
		ok := a.postLead(key, `{"external_id":"`+strings.Repeat("x", 500)+`"}`)
		if ok.status != http.StatusCreated {
			t.Errorf("500-byte external_id = %d %s; want 201", ok.status, ok.raw)
		}
	})
}

func TestIngestEventSourceURL(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		tests := []struct {
			name   string
			url    string
			status int
		}{
			{"https", `https://example.com/quote?utm_source=fb`, http.StatusCreated},
			{"http", `http://example.com`, http.StatusCreated},
			{"javascript", `javascript:alert(1)`, http.StatusUnprocessableEntity},
			{"javascript with slashes", `javascript://example.com/%0Aalert(1)`, http.StatusUnprocessableEntity},
			{"relative", `/quote`, http.StatusUnprocessableEntity},
			{"no scheme", `example.com/quote`, http.StatusUnprocessableEntity},
			{"no host", `https:///quote`, http.StatusUnprocessableEntity},
			{"space", `https://example.com/a b`, http.StatusUnprocessableEntity},
			{"line break", `https://example.com/\n`, http.StatusUnprocessableEntity},
			{"bidi override", `https://example.com/\u202e`, http.StatusUnprocessableEntity},
		}
		created := 0
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := a.postLead(key, fmt.Sprintf(`{"email":"u%d@example.com","event_source_url":"%s"}`, i, tt.url))
				if r.status != tt.status {
					t.Fatalf("= %d %s; want %d", r.status, r.raw, tt.status)
				}
				if tt.status == http.StatusCreated {
					created++
					return
				}
				if r.Error.Code != "invalid_field" || r.Error.Field != "event_source_url" || !strings.Contains(r.Error.Message, "http or https") {
					t.Errorf("= %s; want invalid_field event_source_url saying what is accepted", r.raw)
				}
			})
		}
		if n := a.leadCount(acc); n != int64(created) {
			t.Errorf("%d leads stored; want %d, the accepted ones", n, created)
		}
	})
}

// TestIngestCountryNames: countries written as ISO names, everyday names
// or with other punctuation still give the lead its country key.
func TestIngestCountryNames(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "")
		tests := []struct{ country, want string }{
			{"Korea, Republic of", "kr"},
			{"Côte d’Ivoire", "ci"},
			{"U.S.A.", "us"},
			{"Hong Kong", "hk"},
			{"Korea", ""},
			{"Narnia", ""},
		}
		for i, tt := range tests {
			t.Run(tt.country, func(t *testing.T) {
				r := a.postLead(key, fmt.Sprintf(`{"email":"c%d@example.com","country":%q}`, i, tt.country))
				if r.status != http.StatusCreated {
					t.Fatalf("post = %d %s", r.status, r.raw)
				}
				l, err := s.Lead(t.Context(), acc.ID, r.LeadID)
				if err != nil {
					t.Fatal(err)
				}
				var keys normalize.Keys
				if err := json.Unmarshal([]byte(l.MatchKeys), &keys); err != nil {
					t.Fatal(err)
				}
				if keys.Country.Normalized != tt.want {
					t.Errorf("country %q gave key %q; want %q", tt.country, keys.Country.Normalized, tt.want)
				}
			})
		}
	})
}
