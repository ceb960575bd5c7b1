package crm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

const apiToken = "tok-s3cret"

// serve is an API answering each "GET <path>" (path with its raw query)
// with routes' status and body; it checks the token as check does.
func serve(t *testing.T, check func(*http.Request) bool, routes map[string]func(w http.ResponseWriter)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !check(r) {
			w.WriteHeader(http.StatusUnauthorized)
			// Echo the token sent, as a careless API might.
			sent := cmp.Or(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), r.Header.Get("x-api-token"))
			fmt.Fprintf(w, `{"message":"bad token %s","error":"unauthorized %s"}`, sent, sent)
			return
		}
		route, ok := routes[r.Method+" "+r.URL.RequestURI()]
		if !ok {
			t.Errorf("unexpected %s %s", r.Method, r.URL.RequestURI())
			w.WriteHeader(http.StatusTeapot)
			return
		}
		route(w)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func answer(status int, body string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

func bearer(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer "+apiToken }
func apiTokenHeader(r *http.Request) bool {
	return r.Header.Get("x-api-token") == apiToken && r.URL.Query().Get("api_token") == ""
}

// same fails t unless got is want.
func same(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %+v; want %+v", what, got, want)
	}
}

func TestHubSpotAPI(t *testing.T) {
	deal := "/crm/v3/objects/deals/%s?properties=dealstage,amount,deal_currency_code&associations=contacts"
	base := serve(t, bearer, map[string]func(http.ResponseWriter){
		"GET " + fmt.Sprintf(deal, "12345678901234567"): answer(200, `{"id":"12345678901234567","properties":{"dealstage":"closedwon","amount":"1500.00","deal_currency_code":"EUR","hs_object_id":"12345678901234567"},
			"associations":{"contacts":{"results":[{"id":"501","type":"deal_to_contact"},{"id":"502","type":"deal_to_contact"},{"id":"501","type":"deal_to_contact_unlabeled"}]}}}`),
		"GET " + fmt.Sprintf(deal, "2"):     answer(200, `{"id":"2","properties":{"dealstage":"appointmentscheduled","amount":null,"deal_currency_code":null}}`),
		"GET " + fmt.Sprintf(deal, "a%2Fb"): answer(404, `{"status":"error","message":"resource not found"}`),
		"GET " + fmt.Sprintf(deal, "3"):     answer(502, `<html>bad gateway</html>`),
		"GET " + fmt.Sprintf(deal, "4"):     answer(429, `{"message":"You have reached your secondly limit."}`),
		"GET " + fmt.Sprintf(deal, "5"):     answer(200, `{"properties":`),
		"GET " + fmt.Sprintf(deal, "6"):     answer(400, `{"message":"`+strings.Repeat("x", 500)+`"}`),
		"GET " + fmt.Sprintf(deal, "7"):     answer(400, `{"message":"`+strings.Repeat("x", 193)+apiToken+`"}`),
		"GET /crm/v3/objects/contacts/501?properties=email%2Cphone%2Cmobilephone%2Cmeta_lead_id": answer(200,
			`{"id":"501","properties":{"email":"jane@example.com","phone":"","mobilephone":"+44 7700 900123","meta_lead_id":"123456789012345678"}}`),
		"GET /crm/v3/objects/contacts/502?properties=email%2Cphone%2Cmobilephone": answer(200,
			`{"id":"502","properties":{"email":null,"phone":"+1 555 0100","mobilephone":"+1 555 0199"}}`),
		"GET /crm/v3/pipelines/deals": answer(200, `{"results":[
			{"id":"default","label":"Sales","displayOrder":0,"stages":[{"id":"closedwon","label":"Closed won","displayOrder":2},{"id":"appointmentscheduled","label":"Appointment","displayOrder":0},{"id":"qualifiedtobuy","label":"Qualified","displayOrder":1}]},
			{"id":"77","label":"Renewals","displayOrder":1,"stages":[{"id":"1234","label":"Renewed","displayOrder":0}]}]}`),
	})
	api := HubSpotAPI{BaseURL: base + "/", Token: apiToken}
	ctx := t.Context()

	d, err := api.Deal(ctx, "12345678901234567")
	if err != nil {
		t.Fatalf("Deal: %v", err)
	}
	same(t, "Deal", d, Deal{StageID: "closedwon", Value: value(1500), Currency: "EUR", Contacts: []string{"501", "502"}})
	d, err = api.Deal(ctx, "2")
	if err != nil {
		t.Fatalf("Deal: %v", err)
	}
	same(t, "Deal without amount or contacts", d, Deal{StageID: "appointmentscheduled"})

	ref, err := api.Contact(ctx, "501", "meta_lead_id")
	if err != nil {
		t.Fatalf("Contact: %v", err)
	}
	same(t, "Contact with a lead id property", ref, LeadRef{Email: "jane@example.com", Phone: "+44 7700 900123", MetaLeadID: "123456789012345678"})
	ref, err = api.Contact(ctx, "502", "")
	if err != nil {
		t.Fatalf("Contact: %v", err)
	}
	same(t, "Contact with a phone", ref, LeadRef{Phone: "+1 555 0100"})

	stages, err := api.Stages(ctx)
	if err != nil {
		t.Fatalf("Stages: %v", err)
	}
	same(t, "Stages", stages, []Stage{
		{ID: "appointmentscheduled", Label: "Appointment", Pipeline: "Sales", Order: 0},
		{ID: "qualifiedtobuy", Label: "Qualified", Pipeline: "Sales", Order: 1},
		{ID: "closedwon", Label: "Closed won", Pipeline: "Sales", Order: 2},
		{ID: "1234", Label: "Renewed", Pipeline: "Renewals", Order: 0},
	})

	errorTests := []struct {
		name      string
		api       HubSpotAPI
		id        string
		status    int
		temporary bool
		msg       string
	}{
		{"not there, id escaped", api, "a/b", 404, false, "HubSpot deal a/b is not there (404): resource not found"},
		{"server error", api, "3", 502, true, "502 Bad Gateway"},
		{"rate limited", api, "4", 429, true, "rate limited (429)"},
		{"not JSON", api, "5", 200, false, "not the JSON expected"},
		{"long message cut", api, "6", 400, false, strings.Repeat("x", 200) + "…"},
		// The token across the cut is scrubbed whole, not cut to a start
		// that scrub no longer finds.
		{"token at the cut, never echoed", api, "7", 400, false, strings.Repeat("x", 193) + "[token]"},
		{"token refused, never echoed", HubSpotAPI{BaseURL: base, Token: apiToken + "x"}, "2", 401, false, "the API token was refused (401): bad token [token]"},
		{"no id", api, "", 0, false, "no id"},
	}
	for _, tt := range errorTests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.api.Deal(ctx, tt.id)
			checkAPIError(t, err, tt.status, tt.temporary, tt.msg)
		})
	}
}

func checkAPIError(t *testing.T, err error, status int, temporary bool, msg string) {
	t.Helper()
	var ae *APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error = %v; want an *APIError", err)
	}
	if ae.Status != status || ae.Temporary != temporary || !strings.Contains(ae.Error(), msg) {
		t.Errorf("error = %+v; want status %d, temporary %t, a message with %q", ae, status, temporary, msg)
	}
	if strings.Contains(ae.Error(), "s3cret") {
		t.Errorf("error %q holds the token", ae)
	}
}

func TestPipedriveAPI(t *testing.T) {
	base := serve(t, apiTokenHeader, map[string]func(http.ResponseWriter){
		"GET /api/v2/deals/42":                   answer(200, `{"success":true,"data":{"id":42,"stage_id":4,"value":2400.5,"currency":"GBP","person_id":8}}`),
		"GET /api/v2/deals/43":                   answer(200, `{"success":true,"data":{"id":43,"stage_id":1,"value":0,"currency":"EUR","person_id":null}}`),
		"GET /api/v2/deals/44":                   answer(404, `{"success":false,"error":"Deal not found"}`),
		"GET /api/v2/deals/45":                   answer(503, `{"success":false,"error":"Service unavailable"}`),
		"GET /api/v2/persons/8":                  answer(200, `{"success":true,"data":{"id":8,"emails":[{"value":"old@example.com","primary":false},{"value":"jane@example.com","primary":true}],"phones":[{"value":"+44 20 7946 0000","primary":false,"label":"work"}],"custom_fields":{"abc123":{"type":"varchar","value":"123456789012345678"},"def456":"x"}}}`),
		"GET /api/v2/persons/9":                  answer(200, `{"success":true,"data":{"id":9,"emails":[],"phones":null,"custom_fields":{"abc123":1234567890123456}}}`),
		"GET /api/v2/persons/10":                 answer(200, `{"success":true,"data":{"id":10,"emails":[{"value":"x@y.z"}],"custom_fields":{"abc123":null}}}`),
		"GET /api/v2/pipelines?limit=500":        answer(200, `{"success":true,"data":[{"id":1,"name":"Sales"},{"id":2,"name":"Partners"}],"additional_data":{"next_cursor":null}}`),
		"GET /api/v2/stages?limit=500":           answer(200, `{"success":true,"data":[{"id":5,"name":"Partner won","pipeline_id":2,"order_nr":1},{"id":2,"name":"Contacted","pipeline_id":1,"order_nr":2}],"additional_data":{"next_cursor":"c2"}}`),
		"GET /api/v2/stages?cursor=c2&limit=500": answer(200, `{"success":true,"data":[{"id":1,"name":"Lead in","pipeline_id":1,"order_nr":1},{"id":9,"name":"Orphan","pipeline_id":3,"order_nr":1}],"additional_data":{}}`),
	})
	api := PipedriveAPI{BaseURL: base, Token: apiToken}
	ctx := t.Context()

	d, err := api.Deal(ctx, "42")
	if err != nil {
		t.Fatalf("Deal: %v", err)
	}
	same(t, "Deal", d, Deal{StageID: "4", Value: value(2400.5), Currency: "GBP", Contacts: []string{"8"}})
	d, err = api.Deal(ctx, "43")
	if err != nil {
		t.Fatalf("Deal: %v", err)
	}
	same(t, "Deal without person", d, Deal{StageID: "1", Value: value(0), Currency: "EUR"})

	persons := []struct {
		id, field string
		want      LeadRef
	}{
		{"8", "abc123", LeadRef{Email: "jane@example.com", Phone: "+44 20 7946 0000", MetaLeadID: "123456789012345678"}},
		{"8", "def456", LeadRef{Email: "jane@example.com", Phone: "+44 20 7946 0000", MetaLeadID: "x"}},
		{"8", "", LeadRef{Email: "jane@example.com", Phone: "+44 20 7946 0000"}},
		{"9", "abc123", LeadRef{MetaLeadID: "1234567890123456"}},
		{"10", "abc123", LeadRef{Email: "x@y.z"}},
	}
	for _, tt := range persons {
		ref, err := api.Person(ctx, tt.id, tt.field)
		if err != nil {
			t.Fatalf("Person(%s): %v", tt.id, err)
		}
		same(t, "Person("+tt.id+", "+tt.field+")", ref, tt.want)
	}

	stages, err := api.Stages(ctx)
	if err != nil {
		t.Fatalf("Stages: %v", err)
	}
	same(t, "Stages", stages, []Stage{
		{ID: "1", Label: "Lead in", Pipeline: "Sales", Order: 1},
		{ID: "2", Label: "Contacted", Pipeline: "Sales", Order: 2},
		{ID: "5", Label: "Partner won", Pipeline: "Partners", Order: 1},
		{ID: "9", Label: "Orphan", Pipeline: "", Order: 1},
	})

	_, err = api.Deal(ctx, "44")
	checkAPIError(t, err, 404, false, "Pipedrive deal 44 is not there (404): Deal not found")
	_, err = api.Deal(ctx, "45")
	checkAPIError(t, err, 503, true, "503")
	_, err = PipedriveAPI{BaseURL: base, Token: "other"}.Person(ctx, "8", "")
	checkAPIError(t, err, 401, false, "the API token was refused (401)")
}

func TestAPINetworkErrors(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer slow.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := HubSpotAPI{BaseURL: slow.URL, Token: apiToken}.Deal(ctx, "1")
	checkAPIError(t, err, 0, true, "GET /crm/v3/objects/deals/1")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not wrap the context's", err)
	}

	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	_, err = PipedriveAPI{BaseURL: closed.URL, Token: apiToken}.Stages(t.Context())
	checkAPIError(t, err, 0, true, "GET /api/v2/pipelines")
}

func TestAPIResponseCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"data":{"emails":[],"x":"%s"}}`, strings.Repeat("a", maxResponse))
	}))
	defer srv.Close()
	_, err := PipedriveAPI{BaseURL: srv.URL, Token: apiToken}.Person(t.Context(), "1", "")
	checkAPIError(t, err, 200, false, "over")
}

func TestAPIRedirectNotFollowed(t *testing.T) {
	var followed bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			followed = true
		}
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	}))
	defer srv.Close()
	_, err := PipedriveAPI{BaseURL: srv.URL, Token: apiToken}.Deal(t.Context(), "1")
	checkAPIError(t, err, 302, false, "302")
	if followed {
		t.Error("the redirect was followed with the token")
	}
}
