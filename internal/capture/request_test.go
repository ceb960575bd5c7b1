package capture

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		code  string
		field string
	}{
		{"ok", `{"email":"a@example.com","fields":{"x":1}}`, "", ""},
		{"empty", `  `, "empty_body", ""},
		{"malformed", `{"email":`, "malformed_json", ""},
		{"syntax", `{"email" "a"}`, "malformed_json", ""},
		{"array", `[1]`, "malformed_json", ""},
		{"trailing", `{} {}`, "malformed_json", ""},
		{"unknown key", `{"e_mail":"a"}`, "unknown_field", "e_mail"},
		{"wrong type", `{"partial":"yes"}`, "wrong_type", "partial"},
		{"wrong type number", `{"fill_seconds":"2"}`, "wrong_type", "fill_seconds"},
		{"too large", `{"message":"` + strings.Repeat("x", MaxBody) + `"}`, "body_too_large", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tt.body))
			switch {
			case tt.code == "" && err != nil:
				t.Fatalf("Decode = %v; want ok", err)
			case tt.code != "" && (err == nil || err.Code != tt.code || err.Field != tt.field || err.Status != http.StatusBadRequest):
				t.Fatalf("Decode = %+v; want 400 %s field %q", err, tt.code, tt.field)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	str := func(s string) *string { return &s }
	neg := -1.0
	tests := []struct {
		name   string
		req    Request
		status int
		field  string
	}{
		{"email only", Request{Email: "a@example.com"}, 0, ""},
		{"fbclid only", Request{FBCLID: "abc"}, 0, ""},
		{"no contact key", Request{FirstName: "Jane"}, 422, ""},
		{"blank external id", Request{ExternalID: str("  ")}, 422, "external_id"},
		{"bad created_at", Request{Email: "a@example.com", CreatedAt: "01/12/2026"}, 400, "created_at"},
		{"future created_at", Request{Email: "a@example.com", CreatedAt: "2026-12-02T12:00:00Z"}, 422, "created_at"},
		{"meta lead id short", Request{MetaLeadID: "1234"}, 422, "meta_lead_id"},
		{"meta lead id ok", Request{MetaLeadID: "1234567890123456"}, 0, ""},
		{"source", Request{Email: "a@example.com", Source: "email"}, 422, "source"},
		{"negative fill", Request{Email: "a@example.com", FillSeconds: &neg}, 422, "fill_seconds"},
		{"long name", Request{Email: "a@example.com", FirstName: strings.Repeat("a", 501)}, 422, "first_name"},
		{"bad utf8", Request{Email: "a@example.com", City: "\xff"}, 422, "city"},
		{"nested field", Request{Email: "a@example.com", Fields: map[string]any{"a": []any{1}}}, 422, "fields.a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := tt.req.Validate(now)
			if tt.status == 0 {
				if err != nil {
					t.Fatalf("Validate = %v; want ok", err)
				}
				if v.Source != "website" || v.CreatedAt.IsZero() {
					t.Errorf("defaults: source %q created %v", v.Source, v.CreatedAt)
				}
				return
			}
			if err == nil || err.Status != tt.status || err.Field != tt.field {
				t.Fatalf("Validate = %+v; want %d field %q", err, tt.status, tt.field)
			}
		})
	}
}

// FuzzDecode: any body decodes or is refused with a 400 in the API's shape;
// nothing panics, and what decodes validates without panicking.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"email":"a@example.com","phone":"+1 415 692 4281","fields":{"x":1,"y":true,"z":null}}`,
		`{"external_id":"x","partial":true,"created_at":"2026-12-01T10:00:00Z","fill_seconds":1.5}`,
		`{"meta_lead_id":"123456789012345","source":"instant_form"}`,
		`[]`, `{"a":1}`, `{"email":1}`, `{`, ``, `null`,
	} {
		f.Add([]byte(seed))
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := Decode(strings.NewReader(string(body)))
		if err != nil {
			if err.Status != http.StatusBadRequest || err.Code == "" || err.Message == "" {
				t.Fatalf("Decode error %+v; want a 400 with code and message", err)
			}
			return
		}
		if _, verr := req.Validate(now); verr != nil && (verr.Status < 400 || verr.Status > 499 || verr.Message == "") {
			t.Fatalf("Validate error %+v", verr)
		}
	})
}
