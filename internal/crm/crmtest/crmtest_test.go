package crmtest

import (
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/crm"
)

func float(f float64) *float64 { return &f }

func same(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %+v; want %+v", what, got, want)
	}
}

func apiStatus(t *testing.T, err error, status int, temporary bool) {
	t.Helper()
	var ae *crm.APIError
	if !errors.As(err, &ae) || ae.Status != status || ae.Temporary != temporary {
		t.Errorf("error = %v; want an APIError %d (temporary %t)", err, status, temporary)
	}
}

func TestHubSpotFake(t *testing.T) {
	f := NewHubSpot(t, "tok")
	f.AddDeal("987654321", "closedwon", "1500.00", "EUR", "501", "502")
	f.AddDeal("2", "appointmentscheduled", "", "")
	f.AddContact("501", "", "", nil)
	f.AddContact("502", "jane@example.com", "", map[string]string{"mobilephone": "+44 7700 900123", "meta_lead_id": "123456789012345678"})
	f.AddStage("default", "Sales", "appointmentscheduled", "Appointment")
	f.AddStage("77", "Renewals", "r1", "Renewed")
	f.AddStage("default", "Sales", "closedwon", "Won")
	api := crm.HubSpotAPI{BaseURL: f.URL(), Token: "tok"}
	ctx := t.Context()

	d, err := api.Deal(ctx, "987654321")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Deal", d, crm.Deal{StageID: "closedwon", Value: float(1500), Currency: "EUR", Contacts: []string{"501", "502"}})
	d, err = api.Deal(ctx, "2")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Deal without amount", d, crm.Deal{StageID: "appointmentscheduled"})
	ref, err := api.Contact(ctx, "502", "meta_lead_id")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Contact", ref, crm.LeadRef{Email: "jane@example.com", Phone: "+44 7700 900123", MetaLeadID: "123456789012345678"})
	ref, err = api.Contact(ctx, "502", "")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Contact without the lead id property", ref, crm.LeadRef{Email: "jane@example.com", Phone: "+44 7700 900123"})
	stages, err := api.Stages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Stages", stages, []crm.Stage{
		{ID: "appointmentscheduled", Label: "Appointment", Pipeline: "Sales", Order: 0},
		{ID: "closedwon", Label: "Won", Pipeline: "Sales", Order: 1},
		{ID: "r1", Label: "Renewed", Pipeline: "Renewals", Order: 0},
	})

	_, err = api.Deal(ctx, "404")
	apiStatus(t, err, http.StatusNotFound, false)
	_, err = api.Contact(ctx, "999", "")
	apiStatus(t, err, http.StatusNotFound, false)
	_, err = crm.HubSpotAPI{BaseURL: f.URL(), Token: "other"}.Deal(ctx, "2")
	apiStatus(t, err, http.StatusUnauthorized, false)
	f.Down(true)
	_, err = api.Stages(ctx)
	apiStatus(t, err, http.StatusServiceUnavailable, true)
	f.Down(false)
	if _, err := api.Stages(ctx); err != nil {
		t.Errorf("Stages after Down(false): %v", err)
	}
	if got := f.Calls(); got != 10 {
		t.Errorf("Calls = %d; want 10", got)
	}
}

func TestPipedriveFake(t *testing.T) {
	f := NewPipedrive(t, "tok")
	f.AddDeal(42, 4, 2400, "GBP", 8)
	f.AddDeal(43, 1, 0, "EUR", 0)
	f.AddPerson(8, "jane@example.com", "+44 20 7946 0000", map[string]any{"abc": map[string]any{"type": "varchar", "value": "123456789012345678"}})
	f.AddPerson(9, "", "", map[string]any{"abc": "1234567890123456"})
	// More stages than one page of the API's default: the client reads
	// every page.
	var want []crm.Stage
	for i := 1; i <= 3; i++ {
		f.AddStage(1, "Sales", i, "S"+strconv.Itoa(i))
		want = append(want, crm.Stage{ID: strconv.Itoa(i), Label: "S" + strconv.Itoa(i), Pipeline: "Sales", Order: i})
	}
	f.AddStage(2, "Partners", 700, "P")
	for i := 4; i <= 600; i++ {
		f.AddStage(1, "Sales", i, "S"+strconv.Itoa(i))
		want = append(want, crm.Stage{ID: strconv.Itoa(i), Label: "S" + strconv.Itoa(i), Pipeline: "Sales", Order: i})
	}
	want = append(want, crm.Stage{ID: "700", Label: "P", Pipeline: "Partners", Order: 1})
	api := crm.PipedriveAPI{BaseURL: f.URL(), Token: "tok"}
	ctx := t.Context()

	d, err := api.Deal(ctx, "42")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Deal", d, crm.Deal{StageID: "4", Value: float(2400), Currency: "GBP", Contacts: []string{"8"}})
	d, err = api.Deal(ctx, "43")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Deal without person", d, crm.Deal{StageID: "1", Value: float(0), Currency: "EUR"})
	ref, err := api.Person(ctx, "8", "abc")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Person", ref, crm.LeadRef{Email: "jane@example.com", Phone: "+44 20 7946 0000", MetaLeadID: "123456789012345678"})
	ref, err = api.Person(ctx, "9", "abc")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Person with a plain custom field", ref, crm.LeadRef{MetaLeadID: "1234567890123456"})
	stages, err := api.Stages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Stages", stages, want)

	_, err = api.Person(ctx, "404", "")
	apiStatus(t, err, http.StatusNotFound, false)
	_, err = crm.PipedriveAPI{BaseURL: f.URL(), Token: "other"}.Deal(ctx, "42")
	apiStatus(t, err, http.StatusUnauthorized, false)
	f.Down(true)
	_, err = api.Deal(ctx, "42")
	apiStatus(t, err, http.StatusServiceUnavailable, true)
	f.Down(false)
	// 4 reads, 3 pages (pipelines once, stages twice), 3 refused.
	if got := f.Calls(); got != 10 {
		t.Errorf("Calls = %d; want 10", got)
	}
}

func TestDeliveries(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 30, 0, 123e6, time.UTC)
	tests := []struct {
		name string
		kind crm.Kind
		body []byte
		want crm.Change // Body not compared
	}{
		{"hubspot", crm.HubSpot, HubSpotDealStage(62515, "12345678901234567", "closedwon", at),
			crm.Change{Key: "62515:12345678901234567:dealstage:closedwon:" + strconv.FormatInt(at.UnixMilli(), 10), ObjectID: "12345678901234567", StageID: "closedwon", OccurredAt: at}},
		{"hubspot, a deal id that is not a number", crm.HubSpot, HubSpotDealStage(1, "d-1", "s", at),
			crm.Change{Key: "1:d-1:dealstage:s:" + strconv.FormatInt(at.UnixMilli(), 10), ObjectID: "d-1", StageID: "s", OccurredAt: at}},
		{"pipedrive v2", crm.Pipedrive, PipedriveV2StageChange(42, 4, 3, 8, 2400.5, "GBP", at, "evt-1"),
			crm.Change{Key: "v2:evt-1", ObjectID: "42", StageID: "4", OccurredAt: at, PersonID: "8", Value: float(2400.5), Currency: "GBP"}},
		{"pipedrive v2 without person", crm.Pipedrive, PipedriveV2StageChange(42, 4, 3, 0, 0, "EUR", at, "evt-2"),
			crm.Change{Key: "v2:evt-2", ObjectID: "42", StageID: "4", OccurredAt: at, Value: float(0), Currency: "EUR"}},
		{"pipedrive v1", crm.Pipedrive, PipedriveV1StageChange(42, 4, 3, 8, 100, "EUR", at),
			crm.Change{Key: "deal:42:stage:3>4:2026-12-01T10:30:00.123Z", ObjectID: "42", StageID: "4", OccurredAt: at, PersonID: "8", Value: float(100), Currency: "EUR"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changes, ignored, err := crm.Parse(tt.kind, tt.body, nil)
			if err != nil || len(changes) != 1 || ignored != 0 {
				t.Fatalf("Parse = %d changes, %d ignored, %v; want 1 change", len(changes), ignored, err)
			}
			got := changes[0]
			got.Body = nil
			if !got.OccurredAt.Equal(tt.want.OccurredAt) {
				t.Errorf("OccurredAt = %v; want %v", got.OccurredAt, tt.want.OccurredAt)
			}
			got.OccurredAt = tt.want.OccurredAt
			same(t, "Change", got, tt.want)
		})
	}
}
