package capture

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		body  string
		code  string
		field string
		says  string // in the message, when set
	}{
		{"ok", `{"email":"a@example.com","fields":{"x":1}}`, "", "", ""},
		{"a byte order mark first", "\ufeff{\"email\":\"a@example.com\"}", "", "", ""},
		{"empty", `  `, "empty_body", "", ""},
		{"malformed", `{"email":`, "malformed_json", "", ""},
		{"syntax", `{"email" "a"}`, "malformed_json", "", ""},
		{"array", `[1]`, "malformed_json", "", ""},
		// Not JSON at all is said so, with how the body starts.
		{"a form", `email=jane%40example.com&stage=won`, "malformed_json", "", `not text starting "email=jane%40example…"`},
		{"a string", `"email"`, "malformed_json", "", "must be one JSON object"},
		{"XML", "\n <lead><email>jane@example.com</email></lead>", "malformed_json", "", `not text starting "<lead><email>jane@ex…"`},
		{"trailing", `{} {}`, "malformed_json", "", ""},
		{"unknown key", `{"e_mail":"a"}`, "unknown_field", "e_mail", ""},
		{"wrong type", `{"partial":"yes"}`, "wrong_type", "partial", ""},
		{"wrong type number", `{"fill_seconds":"2"}`, "wrong_type", "fill_seconds", ""},
		{"too large", `{"message":"` + strings.Repeat("x", MaxBody) + `"}`, "body_too_large", "", ""},
		// A number its field cannot hold is named as one, not as a
		// "number, not number".
		{"number out of range", `{"fill_seconds":1e400}`, "wrong_type", "fill_seconds", "fill_seconds is out of range: 1e400"},
		{"long number out of range", `{"fill_seconds":1` + strings.Repeat("0", 400) + `}`, "wrong_type", "fill_seconds", "out of range: 1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tt.body))
			switch {
			case tt.code == "" && err != nil:
				t.Fatalf("Decode = %v; want ok", err)
			case tt.code != "" && (err == nil || err.Code != tt.code || err.Field != tt.field || err.Status != http.StatusBadRequest ||
				!strings.Contains(err.Message, tt.says) || len(err.Message) > 200):
				t.Fatalf("Decode = %+v; want 400 %s field %q saying %q", err, tt.code, tt.field, tt.says)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
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
		`{"email":"a\u202e@example.com","zip":"ZIP\u0000123","message":"a\r\nb\u0007","fields":{"k\u200e":"v\u0085"}}`,
		`{"external_id":"\u0001x","event_source_url":"javascript:alert(1)"}`,
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
		v, verr := req.Validate(now)
		if verr != nil {
			if verr.Status < 400 || verr.Status > 499 || verr.Message == "" {
				t.Fatalf("Validate error %+v", verr)
			}
			return
		}
		// What validates holds no invisible characters but a message's
		// tabs and line feeds, and no NUL at all.
		for _, f := range v.texts() {
			for _, r := range *f.value {
				if Invisible(r) && !(f.name == "message" && (r == '\t' || r == '\n')) {
					t.Fatalf("validated %s = %q holds %U", f.name, *f.value, r)
				}
			}
		}
		for k, val := range v.Fields {
			if strings.IndexFunc(k+val, Invisible) >= 0 {
				t.Fatalf("validated custom field %q = %q holds an invisible character", k, val)
			}
		}
	})
}

// TestValidateRefuses: the refusals of text the database cannot store or
// the API must not pass on, with their status, code, field and a message
// that says what to do.
func TestValidateRefuses(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	str := func(s string) *string { return &s }
	const email = "a@example.com"
	tests := []struct {
		name    string
		req     Request
		status  int
		code    string
		field   string
		message string // a part of the message
	}{
		{"NUL in zip", Request{Email: email, Zip: "ZIP\x00123"}, 400, "invalid_character", "zip", "NUL"},
		{"NUL in email", Request{Email: "a\x00@example.com"}, 400, "invalid_character", "email", "NUL"},
		{"NUL in message", Request{Email: email, Message: "hi\x00"}, 400, "invalid_character", "message", "NUL"},
		{"NUL in external id", Request{ExternalID: str("form\x001")}, 400, "invalid_character", "external_id", "NUL"},
		{"NUL in created_at", Request{Email: email, CreatedAt: "2026-12-01T10:00:00Z\x00"}, 400, "invalid_character", "created_at", "NUL"},
		{"NUL in event_source_url", Request{Email: email, EventSourceURL: "https://example.com/\x00"}, 400, "invalid_character", "event_source_url", "NUL"},
		{"NUL in custom field value", Request{Email: email, Fields: map[string]any{"note": "a\x00b"}}, 400, "invalid_character", "fields.note", "NUL"},
		{"NUL in custom field name", Request{Email: email, Fields: map[string]any{"no\x00te": "a"}}, 400, "invalid_character", "fields", "NUL"},
		{"bad UTF-8 in external id", Request{ExternalID: str("\xff")}, 422, "invalid_field", "external_id", "UTF-8"},
		{"bad UTF-8 in custom field", Request{Email: email, Fields: map[string]any{"note": "\xff"}}, 422, "invalid_field", "fields.note", "UTF-8"},

		{"long external id", Request{ExternalID: str(strings.Repeat("x", 501))}, 422, "invalid_field", "external_id", "longer than 500 bytes"},
		{"long external id once cleaned", Request{ExternalID: str(strings.Repeat("é", 251))}, 422, "invalid_field", "external_id", "500"},
		{"custom field names the same once cleaned", Request{Email: email, Fields: map[string]any{"budget": "1", "bud\u200eget": "2"}}, 422, "invalid_field", "fields", "same"},
		{"custom field name of controls only", Request{Email: email, Fields: map[string]any{"\u202e\x01": "1"}}, 422, "invalid_field", "fields", "1 to 100"},

		{"javascript URL", Request{Email: email, EventSourceURL: "javascript:alert(1)"}, 422, "invalid_field", "event_source_url", "http or https"},
		{"data URL", Request{Email: email, EventSourceURL: "data:text/html,<script>alert(1)</script>"}, 422, "invalid_field", "event_source_url", "http or https"},
		{"ftp URL", Request{Email: email, EventSourceURL: "ftp://example.com/file"}, 422, "invalid_field", "event_source_url", "http or https"},
		{"relative URL", Request{Email: email, EventSourceURL: "/quote"}, 422, "invalid_field", "event_source_url", "absolute"},
		{"scheme-relative URL", Request{Email: email, EventSourceURL: "//example.com/quote"}, 422, "invalid_field", "event_source_url", "absolute"},
		{"host only", Request{Email: email, EventSourceURL: "example.com/quote"}, 422, "invalid_field", "event_source_url", "absolute"},
		{"no host", Request{Email: email, EventSourceURL: "https:///quote"}, 422, "invalid_field", "event_source_url", "host"},
		{"opaque", Request{Email: email, EventSourceURL: "https:example.com"}, 422, "invalid_field", "event_source_url", "host"},
		{"port only", Request{Email: email, EventSourceURL: "http://:8080/"}, 422, "invalid_field", "event_source_url", "host"},
		{"space", Request{Email: email, EventSourceURL: "https://example.com/a b"}, 422, "invalid_field", "event_source_url", "URL"},
		{"space around", Request{Email: email, EventSourceURL: " https://example.com/"}, 422, "invalid_field", "event_source_url", "URL"},
		{"line break", Request{Email: email, EventSourceURL: "https://example.com/\n"}, 422, "invalid_field", "event_source_url", "URL"},
		{"tab in host", Request{Email: email, EventSourceURL: "https://exa\tmple.com/"}, 422, "invalid_field", "event_source_url", "URL"},
		{"control character", Request{Email: email, EventSourceURL: "https://example.com/\x7f"}, 422, "invalid_field", "event_source_url", "URL"},
		{"bidi override", Request{Email: email, EventSourceURL: "https://example.com/\u202egpj.exe"}, 422, "invalid_field", "event_source_url", "URL"},
		{"user and password", Request{Email: email, EventSourceURL: "https://user:secret@example.com/"}, 422, "invalid_field", "event_source_url", "password"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.req.Validate(now)
			if err == nil || err.Status != tt.status || err.Code != tt.code || err.Field != tt.field || !strings.Contains(err.Message, tt.message) {
				t.Fatalf("Validate = %+v; want %d %s field %q, message with %q", err, tt.status, tt.code, tt.field, tt.message)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	str := func(s string) *string { return &s }
	const email = "a@example.com"
	tests := []struct {
		name string
		req  Request
	}{
		{"external id of 500 bytes", Request{ExternalID: str(strings.Repeat("x", 500))}},
		{"external id of 500 bytes and spaces", Request{ExternalID: str(" " + strings.Repeat("x", 500) + " ")}},
		{"http URL", Request{Email: email, EventSourceURL: "http://example.com"}},
		{"https URL", Request{Email: email, EventSourceURL: "https://example.com/quote?utm_source=fb&x=%20y#form"}},
		{"upper-case scheme", Request{Email: email, EventSourceURL: "HTTPS://Example.com/"}},
		{"port and IP", Request{Email: email, EventSourceURL: "http://203.0.113.7:8080/landing"}},
		{"IPv6 host", Request{Email: email, EventSourceURL: "https://[2001:db8::1]/"}},
		{"non-ASCII path", Request{Email: email, EventSourceURL: "https://example.com/café"}},
		{"no URL", Request{Email: email, EventSourceURL: ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.req.Validate(now); err != nil {
				t.Fatalf("Validate = %+v; want ok", err)
			}
		})
	}
}

// TestValidateCleansText: control and bidi characters leave every text
// field; message keeps its tabs and lines, with \n for every line break.
func TestValidateCleansText(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	str := func(s string) *string { return &s }
	const email = "a@example.com"
	tests := []struct {
		name string
		req  Request
		got  func(Validated) string
		want string
	}{
		{"clean value untouched", Request{Email: email, FirstName: "Zoë O'Brien-Łukasz"}, func(v Validated) string { return v.FirstName }, "Zoë O'Brien-Łukasz"},
		{"C0 control", Request{Email: email, FirstName: "Ja\x01ne\x1f"}, func(v Validated) string { return v.FirstName }, "Jane"},
		{"DEL", Request{Email: email, LastName: "Doe\x7f"}, func(v Validated) string { return v.LastName }, "Doe"},
		{"C1 control", Request{Email: email, City: "Paris\u0085\u009b"}, func(v Validated) string { return v.City }, "Paris"},
		{"bidi override", Request{Email: email, FirstName: "\u202eenaJ"}, func(v Validated) string { return v.FirstName }, "enaJ"},
		{"bidi embeddings", Request{Email: email, State: "\u202aCA\u202b\u202c\u202d"}, func(v Validated) string { return v.State }, "CA"},
		{"bidi isolates", Request{Email: email, Zip: "\u206694107\u2067\u2068\u2069"}, func(v Validated) string { return v.Zip }, "94107"},
		{"direction marks", Request{Email: email, Country: "\u200eUS\u200f\u061c"}, func(v Validated) string { return v.Country }, "US"},
		{"in email", Request{Email: "a\u202e@example.com"}, func(v Validated) string { return v.Email }, "a@example.com"},
		{"in phone", Request{Phone: "+1 415\u200e 692 4281"}, func(v Validated) string { return v.Phone }, "+1 415 692 4281"},
		{"in user agent", Request{Email: email, ClientUserAgent: "Mozilla/5.0\x1b[31m"}, func(v Validated) string { return v.ClientUserAgent }, "Mozilla/5.0[31m"},
		{"in external id", Request{ExternalID: str("\u202eform-1\x1f")}, func(v Validated) string { return *v.ExternalID }, "form-1"},
		{"tab and line break in a line", Request{Email: email, City: "New\nYork\tCity\r\n"}, func(v Validated) string { return v.City }, "New York City  "},
		{"message keeps tabs and lines", Request{Email: email, Message: "Hi,\n\tI need\x07 a\u202e quote.\n"}, func(v Validated) string { return v.Message }, "Hi,\n\tI need a quote.\n"},
		{"message CRLF", Request{Email: email, Message: "a\r\nb\r\n\r\nc"}, func(v Validated) string { return v.Message }, "a\nb\n\nc"},
		{"message lone CR", Request{Email: email, Message: "a\rb\r\rc\r"}, func(v Validated) string { return v.Message }, "a\nb\n\nc\n"},
		{"message CR then CRLF", Request{Email: email, Message: "a\r\r\nb"}, func(v Validated) string { return v.Message }, "a\n\nb"},
		{"message other controls", Request{Email: email, Message: "a\vb\fc\u0085d"}, func(v Validated) string { return v.Message }, "abcd"},
		{"custom field value", Request{Email: email, Fields: map[string]any{"note": "call\u202e me\nlater\x02"}}, func(v Validated) string { return v.Fields["note"] }, "call me later"},
		{"custom field name", Request{Email: email, Fields: map[string]any{"bud\u200eget\x01": "5000"}}, func(v Validated) string { return v.Fields["budget"] }, "5000"},
		{"zero-width space, word joiner, BOM", Request{Email: "\ufeffa\u200b@exam\u2060ple.com"}, func(v Validated) string { return v.Email }, "a@example.com"},
		{"line separators in a line", Request{Email: email, City: "New\u2028York\u2029"}, func(v Validated) string { return v.City }, "New York "},
		{"line separators in a message", Request{Email: email, Message: "a\u2028b\u2029c"}, func(v Validated) string { return v.Message }, "a\nb\nc"},
		{"tag characters, soft hyphen, invisible operators", Request{Email: email, FirstName: "Ja\U000E0041\U000E007Fne\u00ad\u2062\u180e\ufff9"}, func(v Validated) string { return v.FirstName }, "Jane"},
		{"emoji and joiners kept", Request{Email: email, FirstName: "👩\u200d💻 Ana"}, func(v Validated) string { return v.FirstName }, "👩\u200d💻 Ana"},
		{"right-to-left text kept", Request{Email: email, City: "תל אביב"}, func(v Validated) string { return v.City }, "תל אביב"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := tt.req.Validate(now)
			if err != nil {
				t.Fatalf("Validate = %v; want ok", err)
			}
			if got := tt.got(v); got != tt.want {
				t.Errorf("Validate cleaned to %q; want %q", got, tt.want)
			}
		})
	}
}

// TestValidateLeavesRequest: cleaning works on Validate's copy; the
// caller's request, external_id included, is as it was.
func TestValidateLeavesRequest(t *testing.T) {
	t.Parallel()
	id := "\u202eform-1"
	req := Request{ExternalID: &id, FirstName: "Jane\x01"}
	v, err := req.Validate(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if *v.ExternalID != "form-1" || v.FirstName != "Jane" {
		t.Errorf("validated external_id %q first_name %q; want form-1 and Jane", *v.ExternalID, v.FirstName)
	}
	if id != "\u202eform-1" || req.FirstName != "Jane\x01" {
		t.Errorf("caller's external_id %q first_name %q changed", id, req.FirstName)
	}
}

// Click ids come from the body or, when it lacks one, from the landing
// page's URL; those other than Meta's fbclid are kept as custom fields,
// unless the body sends a custom field of that name.
func TestClickIDs(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	validate := func(body string) (Validated, *Error) {
		req, err := Decode(strings.NewReader(body))
		if err != nil {
			t.Fatalf("Decode(%s) = %v", body, err)
		}
		return req.Validate(now)
	}
	v, err := validate(`{"email":"a@example.com","gclid":"from-body",
		"event_source_url":"https://example.com/q?fbclid=IwAR1&gclid=from-url&ttclid=tt%201&li_fat_id=li&msclkid=ms&utm_campaign=x",
		"fields":{"msclkid":"mine"}}`)
	if err != nil {
		t.Fatal(err)
	}
	if v.FBCLID != "IwAR1" {
		t.Errorf("fbclid = %q; want the URL's", v.FBCLID)
	}
	want := map[string]string{"gclid": "from-body", "ttclid": "tt 1", "li_fat_id": "li", "msclkid": "mine"}
	for k, w := range want {
		if v.Fields[k] != w {
			t.Errorf("fields[%s] = %q; want %q", k, v.Fields[k], w)
		}
	}
	if _, ok := v.Fields["gbraid"]; ok || len(v.Fields) != len(want) {
		t.Errorf("fields = %v; want only %v", v.Fields, want)
	}
	// A landing URL's fbclid is a contact key as the body's is.
	if _, err := validate(`{"event_source_url":"https://example.com/?fbclid=IwAR2"}`); err != nil {
		t.Errorf("a lead with only the URL's fbclid: %v", err)
	}
	long := strings.Repeat("x", maxShort+1)
	if _, err := validate(`{"email":"a@example.com","event_source_url":"https://example.com/?gclid=` + long + `"}`); err == nil || err.Field != "event_source_url" {
		t.Errorf("a URL's gclid of %d bytes: %v; want refused", len(long), err)
	}
	if _, err := validate(`{"email":"a@example.com","gclid":"` + long + `"}`); err == nil || err.Field != "gclid" {
		t.Errorf("a gclid of %d bytes: %v; want refused", len(long), err)
	}
	if _, err := validate(`{"email":"a@example.com","event_source_url":"https://example.com/?gclid=a%00b"}`); err != nil {
		t.Errorf("a URL's gclid with %%00: %v; want it cleaned", err)
	}
}

// FuzzDecodeCollect: any body a page posts to the collect API is taken or
// refused with a 4xx in the API's shape; nothing panics, and what is taken
// carries the request's address and user agent, never the body's.
func FuzzDecodeCollect(f *testing.F) {
	for _, seed := range []string{
		`{"external_id":"ls_0123456789abcdef0123456789abcdef","email":"a@example.com","partial":true}`,
		`{"email":"a@example.com","event_source_url":"https://example.com/?fbclid=IwAR1&gclid=G&msclkid=%00"}`,
		`{"email":"a@example.com","client_ip_address":"1.2.3.4"}`,
		`{"email":"a@example.com","fields":{"gclid":"x"},"gclid":"y"}`,
		`{"phone":"+1 415 692 4281","created_at":"2026-12-01T10:00:00Z"}`,
		`{"message":"` + strings.Repeat("x", MaxCollectBody) + `"}`,
		`[]`, `{`, ``, `null`,
	} {
		f.Add([]byte(seed))
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := DecodeCollect(strings.NewReader(string(body)), "198.51.100.7", "Mozilla/5.0 (Visitor)", now)
		if err != nil {
			if err.Status < 400 || err.Status > 499 || err.Code == "" || err.Message == "" {
				t.Fatalf("DecodeCollect error %+v; want a 4xx with code and message", err)
			}
			return
		}
		if len(body) > MaxCollectBody {
			t.Fatalf("a body of %d bytes was taken", len(body))
		}
		if v.ClientIP != "198.51.100.7" || v.ClientUserAgent != "Mozilla/5.0 (Visitor)" || v.Source != "website" || !v.CreatedAt.Equal(now) {
			t.Fatalf("taken with ip %q, ua %q, source %q, created %v; want the request's", v.ClientIP, v.ClientUserAgent, v.Source, v.CreatedAt)
		}
		for _, name := range []string{"gclid", "gbraid", "wbraid", "ttclid", "ttp", "epik", "li_fat_id", "msclkid"} {
			if val, ok := v.Fields[name]; ok && (len(val) > maxShort*4 || strings.IndexByte(val, 0) >= 0) {
				t.Fatalf("custom field %s = %q", name, val)
			}
		}
	})
}
