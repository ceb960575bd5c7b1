package google_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/google"
	"github.com/leadsignal/leadsignal/internal/google/googletest"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/models"
)

var (
	eventTime = time.Date(2026, 12, 1, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	account   = models.Account{ID: 1, Currency: "usd", DefaultCountry: "US"}
	actionA   = googletest.ConversionActions[0]
	actionB   = googletest.ConversionActions[1]
)

// contact is a lead's contact data as posted.
type contact struct {
	email, phone, first, last, country, zip string
}

// input is the BuildInput of a lead with contact c and custom fields
// (a JSON object), its keys normalised the way capture does.
func input(c contact, fields string) capi.BuildInput {
	l := models.Lead{AccountID: account.ID, Source: models.SourceWebsite, Email: c.email, Phone: c.phone,
		FirstName: c.first, LastName: c.last, Country: c.country, Zip: c.zip, Fields: fields}
	k := normalize.Normalize(normalize.Input{Email: c.email, Phone: c.phone, FirstName: c.first, LastName: c.last,
		Country: c.country, Zip: c.zip, DefaultCountry: account.DefaultCountry, CapturedAt: eventTime})
	return capi.BuildInput{Account: account, Lead: l, Keys: k,
		Event: models.Event{EventName: "Lead", EventID: "ls_1", EventTime: eventTime, Origin: models.OriginDefault}}
}

// prepare is Prepare's event as the fake decodes it.
func prepare(t *testing.T, in capi.BuildInput, action string) (googletest.Event, error) {
	t.Helper()
	raw, err := google.Prepare(in, action)
	var inv *capi.Invalid
	if err != nil && !errors.As(err, &inv) {
		t.Fatalf("Prepare: %v", err)
	}
	var e googletest.Event
	if uerr := json.Unmarshal(raw, &e); uerr != nil {
		t.Fatalf("Prepare wrote %s: %v", raw, uerr)
	}
	return e, err
}

// The hashes are destinations.md's Google test vectors: the Gmail rule for
// gmail.com only, and the phone as E.164 with its "+".
func TestPrepareVectors(t *testing.T) {
	for _, tt := range []struct {
		name, email, phone, want string
	}{
		{"gmail drops dots and tag", "cloudy.sanfrancisco+shopping@gmail.com", "",
			"223ebda6f6889b1494551ba902d9d381daf2f642bae055888e96343d53e9f9c4"},
		{"other domains keep them", "user.name+NYC@Example.com", "",
			"f109a2a632fbcea5fc82049f50beed3d8621bf9034399f437fb622222acccdac"},
		{"gmail trimmed and lower-cased", " Alex.Smith+Promo@Gmail.com ", "",
			"72d3b188af0f3324b9938c5ea015d5cc7155ebf56160b551cd5037bab70b3d7d"},
		{"a dot elsewhere stays", "alex.2@example.com", "",
			"97a24240e3c76dfc0abdb63a3d73468ff8d94b81fd3dc084cc32994ba4fad7fe"},
		{"phone with the default country", "", "(800)555-0100",
			"fb4f73a6ec5fdb7077d564cdd22c3554b43ce49168550c3b12c547b78c517b30"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, err := prepare(t, input(contact{email: tt.email, phone: tt.phone}, ""), actionA)
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			if e.UserData == nil || len(e.UserData.UserIdentifiers) != 1 {
				t.Fatalf("user data %+v; want one identifier", e.UserData)
			}
			id := e.UserData.UserIdentifiers[0]
			if got := id.EmailAddress + id.PhoneNumber; got != tt.want {
				t.Errorf("Prepare(%q, %q) hashed %q; want %q", tt.email, tt.phone, got, tt.want)
			}
		})
	}
}

func TestPrepare(t *testing.T) {
	full := contact{email: "jane@example.com", phone: "+1 415 555 0100", first: "Jane", last: "Doe", country: "US", zip: "94107-1234"}
	ids := func(withAddress bool) *googletest.UserData {
		u := &googletest.UserData{UserIdentifiers: []googletest.UserIdentifier{
			{EmailAddress: normalize.Hash("jane@example.com")}, {PhoneNumber: normalize.Hash("+14155550100")}}}
		if withAddress {
			u.UserIdentifiers = append(u.UserIdentifiers, googletest.UserIdentifier{Address: &googletest.Address{
				GivenName: normalize.Hash("jane"), FamilyName: normalize.Hash("doe"), RegionCode: "US", PostalCode: "94107"}})
		}
		return u
	}
	base := googletest.Event{DestinationReferences: []string{actionA}, TransactionID: "ls_1",
		EventTimestamp: "2026-12-01T09:00:00Z", EventSource: "WEB"}
	with := func(f func(*googletest.Event)) googletest.Event {
		e := base
		f(&e)
		return e
	}
	value := func(v float64) *float64 { return &v }

	for _, tt := range []struct {
		name   string
		in     capi.BuildInput
		action string
		want   googletest.Event
	}{
		{"a full lead", input(full, ""), actionA, with(func(e *googletest.Event) { e.UserData = ids(true) })},
		{"gclid before the braids", input(full, `{"gbraid":"B","gclid":" G ","wbraid":"W"}`), actionA,
			with(func(e *googletest.Event) {
				e.UserData, e.AdIdentifiers = ids(true), &googletest.AdIdentifiers{GCLID: "G"}
			})},
		{"gbraid before wbraid", input(full, `{"wbraid":"W","gbraid":"B"}`), actionA,
			with(func(e *googletest.Event) {
				e.UserData, e.AdIdentifiers = ids(true), &googletest.AdIdentifiers{GBRAID: "B"}
			})},
		{"wbraid alone", input(contact{}, `{"wbraid":"W","gclid":""}`), actionA,
			with(func(e *googletest.Event) { e.AdIdentifiers = &googletest.AdIdentifiers{WBRAID: "W"} })},
		{"custom fields that are not JSON", input(full, `not json`), actionA,
			with(func(e *googletest.Event) { e.UserData = ids(true) })},
		{"no address without a postal code", input(contact{email: full.email, phone: full.phone, first: "Jane", last: "Doe", country: "US"}, ""),
			actionA, with(func(e *googletest.Event) { e.UserData = ids(false) })},
		{"no address without a last name", input(contact{email: full.email, phone: full.phone, first: "Jane", country: "US", zip: "94107"}, ""),
			actionA, with(func(e *googletest.Event) { e.UserData = ids(false) })},
		{"the account's currency", func() capi.BuildInput {
			in := input(full, "")
			in.Event.Value = value(250)
			return in
		}(), actionB, with(func(e *googletest.Event) {
			e.UserData, e.DestinationReferences = ids(true), []string{actionB}
			e.ConversionValue, e.Currency = value(250), "USD"
		})},
		{"a stage event is OTHER, in its own currency", func() capi.BuildInput {
			in := input(full, "")
			in.Event.Origin, in.Event.Value, in.Event.Currency = models.OriginStage, value(0), " eur"
			return in
		}(), actionA, with(func(e *googletest.Event) {
			e.UserData, e.EventSource, e.ConversionValue, e.Currency = ids(true), "OTHER", value(0), "EUR"
		})},
		{"a phone lead is PHONE", func() capi.BuildInput {
			in := input(full, "")
			in.Lead.Source = models.SourcePhone
			return in
		}(), actionA, with(func(e *googletest.Event) { e.UserData, e.EventSource = ids(true), "PHONE" })},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prepare(t, tt.in, tt.action)
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(tt.want)
				t.Errorf("Prepare =\n%s\nwant\n%s", g, w)
			}
		})
	}
}

// Prepare refuses what Google would refuse, with words a person
// understands, and still returns the JSON for the send log.
func TestPrepareInvalid(t *testing.T) {
	ok := contact{email: "jane@example.com"}
	for _, tt := range []struct {
		name          string
		in            capi.BuildInput
		action        string
		field, reason string
	}{
		{"no conversion action", input(ok, ""), "", "conversion_action", `no Google Ads conversion action is mapped to "Lead"`},
		{"a conversion action that is no id", input(ok, ""), "customers/1/conversionActions/2", "conversion_action", "digits only"},
		{"no identifier", input(contact{first: "Jane"}, `{"fbclid":"F"}`), actionA, "user_data", "Google click id"},
		{"a phone that came hashed", func() capi.BuildInput {
			in := input(contact{}, "")
			in.Keys = normalize.Normalize(normalize.Input{Phone: normalize.Hash("18005550100")})
			return in
		}(), actionA, "user_data", "to match the lead by"},
		{"no event id", func() capi.BuildInput {
			in := input(ok, "")
			in.Event.EventID = ""
			return in
		}(), actionA, "transaction_id", "missing"},
		{"no event time", func() capi.BuildInput {
			in := input(ok, "")
			in.Event.EventTime = time.Time{}
			return in
		}(), actionA, "event_timestamp", "missing"},
		{"a currency that is none", func() capi.BuildInput {
			in := input(ok, "")
			in.Event.Value, in.Event.Currency = new(10.0), "dollars"
			return in
		}(), actionA, "currency", "ISO 4217"},
		{"a value that is not a number", func() capi.BuildInput {
			in := input(ok, "")
			in.Event.Value = new(math.NaN())
			return in
		}(), actionA, "conversion_value", "not a number"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := google.Prepare(tt.in, tt.action)
			var inv *capi.Invalid
			if !errors.As(err, &inv) || inv.Field != tt.field || !strings.Contains(inv.Reason, tt.reason) {
				t.Fatalf("Prepare error %v; want %s: ...%s...", err, tt.field, tt.reason)
			}
			if !json.Valid(raw) {
				t.Errorf("Prepare returned %q; want the event's JSON all the same", raw)
			}
		})
	}
}
