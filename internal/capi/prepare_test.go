package capi_test

import (
	"fmt"
	"testing"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/normalize"
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

// Check answers as Prepare does, without the JSON, whichever check the
// event fails: it reads the keys where Prepare reads the built user_data.
func TestCheckAgreesWithPrepare(t *testing.T) {
	noUA := func(in *capi.BuildInput) { in.Lead.ClientUserAgent, in.Keys.UserAgent = "", "" }
	noURL := func(in *capi.BuildInput) { in.Lead.EventSourceURL = "" }
	badLeadID := func(in *capi.BuildInput) { in.Lead.MetaLeadID = "12ab" }
	shortLeadID := func(in *capi.BuildInput) { in.Lead.MetaLeadID = " 12345 " }
	goodLeadID := func(in *capi.BuildInput) { in.Lead.MetaLeadID = " 1234567890123456 " }
	purchase := func(in *capi.BuildInput) { in.Event.EventName = "Purchase" }
	valued := func(in *capi.BuildInput) { v := 12.5; in.Event.Value, in.Event.Currency = &v, "eur" }
	badCurrency := func(in *capi.BuildInput) { v := 12.5; in.Event.Value, in.Event.Currency = &v, "ZZZ" }
	notHashed := func(in *capi.BuildInput) { in.Keys.Email.Hash = "joe@example.com" }
	badFBC := func(in *capi.BuildInput) { in.Keys.FBC = "fb.1.x" }
	badFBP := func(in *capi.BuildInput) { in.Keys.FBP = "fbp" }
	privateIP := func(in *capi.BuildInput) { in.Keys.ClientIP = "10.0.0.1" }
	noKeys := func(in *capi.BuildInput) { in.Keys = normalize.Keys{} }
	ipAndUAOnly := func(in *capi.BuildInput) {
		in.Keys = normalize.Keys{ClientIP: in.Keys.ClientIP, UserAgent: in.Keys.UserAgent}
	}
	whatsapp := func(in *capi.BuildInput) { in.Lead.Source = models.SourceWhatsApp }
	whatsappLead := func(in *capi.BuildInput) { in.Lead.Source, in.Event.EventName = models.SourceWhatsApp, "LeadSubmitted" }
	phoneIPOnly := func(in *capi.BuildInput) {
		in.Lead.Source, in.Keys = models.SourcePhone, normalize.Keys{ClientIP: in.Keys.ClientIP, UserAgent: in.Keys.UserAgent}
	}
	noName := func(in *capi.BuildInput) { in.Event.EventName = " " }
	noID := func(in *capi.BuildInput) { in.Event.EventID = "" }
	ldu := func(in *capi.BuildInput) { in.Dataset.LDU = models.LDUAlways }
	for name, change := range map[string]func(*capi.BuildInput){
		"as it is": func(*capi.BuildInput) {}, "no user agent": noUA, "no page URL": noURL, "a lead id that is not one": badLeadID,
		"a lead id too short": shortLeadID, "a lead id": goodLeadID, "a Purchase without value": purchase, "a value": valued,
		"an unknown currency": badCurrency, "an email not hashed": notHashed, "a malformed fbc": badFBC, "a malformed fbp": badFBP,
		"a private IP": privateIP, "no keys": noKeys, "only the IP and user agent": ipAndUAOnly, "whatsapp Lead": whatsapp,
		"whatsapp LeadSubmitted": whatsappLead, "a phone call with only the IP and user agent": phoneIPOnly,
		"no event name": noName, "no event id": noID, "LDU": ldu,
	} {
		l, k := lead()
		in := capi.BuildInput{Account: account, Dataset: dataset, Lead: l, Keys: k,
			Event: models.Event{EventName: "Lead", EventTime: now, EventID: "e1"}}
		change(&in)
		_, _, perr := capi.Prepare(in)
		if cerr := capi.Check(in); fmt.Sprint(cerr) != fmt.Sprint(perr) {
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
