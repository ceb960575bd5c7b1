package capi_test

import (
	"testing"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/models"
)

// A prepared payload's stamp changes with every setting that appears in
// payloads, and with nothing else.
func TestStampFollowsThePayloadSettings(t *testing.T) {
	acc := models.Account{ID: 1, Name: "Acme", Currency: "USD", CRMName: "HubSpot"}
	ds := models.Dataset{ID: 2, Name: "Main", PixelID: "123", Mode: models.ModeLive, LDU: models.LDUOff}
	base := capi.Stamp(acc, ds)
	if base == 0 {
		t.Fatal("stamp 0 means no prepared payload")
	}
	changed := map[string]func(*models.Account, *models.Dataset){
		"LDU":      func(_ *models.Account, d *models.Dataset) { d.LDU = models.LDUCalifornia },
		"currency": func(a *models.Account, _ *models.Dataset) { a.Currency = "EUR" },
		"CRM name": func(a *models.Account, _ *models.Dataset) { a.CRMName = "Salesforce" },
	}
	for name, change := range changed {
		a, d := acc, ds
		change(&a, &d)
		if capi.Stamp(a, d) == base {
			t.Errorf("changing the %s keeps the stamp", name)
		}
	}
	same := map[string]func(*models.Account, *models.Dataset){
		"account name":     func(a *models.Account, _ *models.Dataset) { a.Name = "Acme Inc" },
		"dataset name":     func(_ *models.Account, d *models.Dataset) { d.Name = "Other" },
		"mode":             func(_ *models.Account, d *models.Dataset) { d.Mode = models.ModeTest },
		"test event code":  func(_ *models.Account, d *models.Dataset) { d.TestEventCode = "TEST1" },
		"currency's case":  func(a *models.Account, _ *models.Dataset) { a.Currency = "usd" },
		"CRM name's space": func(a *models.Account, _ *models.Dataset) { a.CRMName = " HubSpot " },
	}
	for name, change := range same {
		a, d := acc, ds
		change(&a, &d)
		if capi.Stamp(a, d) != base {
			t.Errorf("changing the %s changes the stamp", name)
		}
	}
}

// Check answers as Prepare does, without the JSON.
func TestCheckAgreesWithPrepare(t *testing.T) {
	noUA := func(in *capi.BuildInput) { in.Lead.ClientUserAgent, in.Keys.UserAgent = "", "" }
	noURL := func(in *capi.BuildInput) { in.Lead.EventSourceURL = "" }
	badLeadID := func(in *capi.BuildInput) { in.Lead.MetaLeadID = "12ab" }
	purchase := func(in *capi.BuildInput) { in.Event.EventName = "Purchase" }
	for name, change := range map[string]func(*capi.BuildInput){
		"as it is": func(*capi.BuildInput) {}, "no user agent": noUA, "no page URL": noURL, "a lead id that is not one": badLeadID,
		"a Purchase without value": purchase,
	} {
		l, k := lead()
		in := capi.BuildInput{Account: account, Dataset: dataset, Lead: l, Keys: k,
			Event: models.Event{EventName: "Lead", EventTime: now, EventID: "e1"}}
		change(&in)
		_, _, perr := capi.Prepare(in)
		if cerr := capi.Check(in); (cerr == nil) != (perr == nil) {
			t.Errorf("%s: Check = %v; Prepare = %v", name, cerr, perr)
		}
	}
}

// A stage's record key ignores the stage's case, as stage changes find
// their mappings: a booking rule at "booked" and a mapping of "Booked"
// make one event.
func TestStageRecordKeyIgnoresCase(t *testing.T) {
	l := models.Lead{ID: 7}
	if a, b := capi.StageRecordKey(l, "Booked", ""), capi.StageRecordKey(l, "booked", ""); a != b || a != "lead:7:booked" {
		t.Errorf("StageRecordKey = %q and %q; want both lead:7:booked", a, b)
	}
}
