package pinterest_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/pinterest"
	"github.com/leadsignal/leadsignal/models"
)

// Hashes of destinations.md's Pinterest test vectors (section 6).
const (
	emailHash   = "7904116daabb1a0dcb3941026d296ffb1d1ee8bbe4e8ae789254af5874c625ab" // " Alex.Smith+Promo@Gmail.com "
	phoneHash   = "92cfdc5fbcd4a20fbe5d3857af6c1aba31762105bba7f21a17155e920653046c" // "+1 (800) 555-0100"
	ukPhoneHash = "8d5f937f3a5590634cbe975951a6aa1543170671ce6e73cce4062f4e8c288417" // "+44 20 7183 8750"
	usHash      = "79adb2a2fce5c6ba215fe5f27f532d4e7edbac4b6a5e09e1ef3a08084a904621" // country "US"
)

const eventTime = 1764582000

// lead is the website lead every case starts from: its raw contact data
// normalised as capture does.
func lead() (models.Lead, normalize.Input) {
	l := models.Lead{
		Source: models.SourceWebsite, Email: " Alex.Smith+Promo@Gmail.com ", Phone: "+1 (800) 555-0100",
		Country: "US", ClientIP: "203.0.113.7", ClientUserAgent: "Mozilla/5.0",
		EventSourceURL: " https://example.com/contact ", Fields: "{}",
	}
	in := normalize.Input{
		Email: l.Email, Phone: l.Phone, Country: l.Country, ClientIP: l.ClientIP, UserAgent: l.ClientUserAgent,
		CapturedAt: time.Unix(eventTime, 0), DefaultCountry: "US",
	}
	return l, in
}

// input is the BuildInput of the lead's Lead event, changed by change.
func input(change func(l *models.Lead, in *normalize.Input, b *capi.BuildInput)) capi.BuildInput {
	l, raw := lead()
	b := capi.BuildInput{
		Account: models.Account{Currency: "usd"},
		Dataset: models.Dataset{LDU: models.LDUOff},
		Event:   models.Event{EventName: "Lead", EventID: "ls_1", EventTime: time.Unix(eventTime, 0), Origin: models.OriginRule},
	}
	if change != nil {
		change(&l, &raw, &b)
	}
	b.Lead = l
	b.Keys = normalize.Normalize(raw)
	return b
}

func value(v float64) *float64 { return &v }

// at is the value at a dotted path of a decoded event; nil when absent.
func at(m map[string]any, path string) any {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[k]
	}
	return v
}

func TestPrepare(t *testing.T) {
	for _, tt := range []struct {
		name    string
		change  func(l *models.Lead, in *normalize.Input, b *capi.BuildInput)
		event   string
		want    map[string]any // path -> value; nil: absent
		invalid string         // the *capi.Invalid's Field; "" for none
	}{
		{name: "a website lead, with section 6's vectors", event: "lead", want: map[string]any{
			"event_name": "lead", "action_source": "web", "event_time": float64(eventTime), "event_id": "ls_1",
			"event_source_url": "https://example.com/contact", "opt_out": false,
			"user_data.em": []any{emailHash}, "user_data.ph": []any{phoneHash}, "user_data.country": []any{usHash},
			"user_data.client_ip_address": "203.0.113.7", "user_data.client_user_agent": "Mozilla/5.0",
			"user_data.fn": nil, "user_data.click_id": nil, "custom_data": nil,
		}},
		{name: "a UK phone", event: "lead", change: func(_ *models.Lead, in *normalize.Input, _ *capi.BuildInput) {
			in.Phone, in.Country = "+44 20 7183 8750", "GB"
		}, want: map[string]any{"user_data.ph": []any{ukPhoneHash}}},
		{name: "names, city, state, zip, gender, birth date and external id hashed", event: "lead",
			change: func(_ *models.Lead, in *normalize.Input, _ *capi.BuildInput) {
				in.FirstName, in.LastName, in.City, in.State, in.Zip = "Alex", "Smith", "New York", "NY", "10001"
				in.Gender, in.DateOfBirth, in.ExternalID = "female", "1990-02-01", "crm-42"
			}, want: map[string]any{
				"user_data.fn": []any{normalize.Hash("alex")}, "user_data.ln": []any{normalize.Hash("smith")},
				"user_data.ct": []any{normalize.Hash("newyork")}, "user_data.st": []any{normalize.Hash("ny")},
				"user_data.zp": []any{normalize.Hash("10001")}, "user_data.ge": []any{normalize.Hash("f")},
				"user_data.db": []any{normalize.Hash("19900201")}, "user_data.external_id": []any{normalize.Hash("crm-42")},
			}},
		{name: "a phone-only lead is refused", event: "lead", change: func(_ *models.Lead, in *normalize.Input, _ *capi.BuildInput) {
			in.Email, in.ClientIP, in.UserAgent = "", "", ""
		}, want: map[string]any{"user_data.ph": []any{phoneHash}, "user_data.em": nil}, invalid: "user_data"},
		{name: "an IP address without a user agent is not enough", event: "lead",
			change:  func(_ *models.Lead, in *normalize.Input, _ *capi.BuildInput) { in.Email, in.UserAgent = "", "" },
			invalid: "user_data"},
		{name: "the IP address with the user agent is enough", event: "lead",
			change: func(_ *models.Lead, in *normalize.Input, _ *capi.BuildInput) { in.Email = "" },
			want:   map[string]any{"user_data.em": nil, "user_data.client_ip_address": "203.0.113.7"}},
		{name: "a stage event is offline", event: "custom", change: func(_ *models.Lead, _ *normalize.Input, b *capi.BuildInput) {
			b.Event.EventName, b.Event.Origin = "QualifiedLead", models.OriginStage
		}, want: map[string]any{"event_name": "custom", "action_source": "offline", "event_source_url": nil}},
		{name: "a CRM lead is offline", event: "lead", change: func(l *models.Lead, _ *normalize.Input, _ *capi.BuildInput) {
			l.Source = models.SourceCRM
		}, want: map[string]any{"action_source": "offline", "event_source_url": nil}},
		{name: "a won deal's value as a string", event: "checkout", change: func(_ *models.Lead, _ *normalize.Input, b *capi.BuildInput) {
			b.Event.Value, b.Event.Currency = value(250), " gbp "
		}, want: map[string]any{"custom_data.value": "250.00", "custom_data.currency": "GBP", "custom_data.order_id": "ls_1",
			"custom_data.opt_out_type": nil}},
		{name: "a value rounded to cents, in the account's currency", event: "checkout",
			change: func(_ *models.Lead, _ *normalize.Input, b *capi.BuildInput) { b.Event.Value = value(1234.567) },
			want:   map[string]any{"custom_data.value": "1234.57", "custom_data.currency": "USD"}},
		{name: "no value, no currency", event: "lead", change: func(_ *models.Lead, _ *normalize.Input, b *capi.BuildInput) {
			b.Event.Currency = "USD"
		}, want: map[string]any{"custom_data": nil}},
		{name: "a currency that is none", event: "checkout", change: func(_ *models.Lead, _ *normalize.Input, b *capi.BuildInput) {
			b.Event.Value, b.Event.Currency = value(10), "dollars"
		}, invalid: "custom_data.currency"},
		{name: "Limited Data Use always", event: "lead", change: func(_ *models.Lead, _ *normalize.Input, b *capi.BuildInput) {
			b.Dataset.LDU = models.LDUAlways
		}, want: map[string]any{"custom_data.opt_out_type": "LDP", "custom_data.value": nil, "opt_out": false}},
		{name: "Limited Data Use for a lead from California", event: "lead",
			change: func(l *models.Lead, _ *normalize.Input, b *capi.BuildInput) {
				b.Dataset.LDU, l.State = models.LDUCalifornia, "California"
			}, want: map[string]any{"custom_data.opt_out_type": "LDP"}},
		{name: "Limited Data Use for California, a lead from New York", event: "lead",
			change: func(l *models.Lead, _ *normalize.Input, b *capi.BuildInput) {
				b.Dataset.LDU, l.State = models.LDUCalifornia, "NY"
			}, want: map[string]any{"custom_data": nil}},
		{name: "the epik click id", event: "lead", change: func(l *models.Lead, _ *normalize.Input, _ *capi.BuildInput) {
			l.Fields = `{"plan":"pro","epik":" dj0yJnU9abc "}`
		}, want: map[string]any{"user_data.click_id": "dj0yJnU9abc"}},
		{name: "an epik that is not a string", event: "lead", change: func(l *models.Lead, _ *normalize.Input, _ *capi.BuildInput) {
			l.Fields = `{"epik":42}`
		}, want: map[string]any{"user_data.click_id": nil}},
		{name: "fields that are not JSON", event: "lead", change: func(l *models.Lead, _ *normalize.Input, _ *capi.BuildInput) {
			l.Fields = `{"epik":`
		}, want: map[string]any{"user_data.click_id": nil}},
		{name: "no event name", event: " ", invalid: "event_name"},
		{name: "no event id", event: "lead", change: func(_ *models.Lead, _ *normalize.Input, b *capi.BuildInput) {
			b.Event.EventID = ""
		}, invalid: "event_id"},
		{name: "no event time", event: "lead", change: func(_ *models.Lead, _ *normalize.Input, b *capi.BuildInput) {
			b.Event.EventTime = time.Time{}
		}, want: map[string]any{"event_time": float64(0)}, invalid: "event_time"},
		{name: "an old event is not judged here", event: "lead", change: func(_ *models.Lead, _ *normalize.Input, b *capi.BuildInput) {
			b.Event.EventTime = time.Unix(eventTime, 0).AddDate(-2, 0, 0)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body, err := pinterest.Prepare(input(tt.change), tt.event)
			var inv *capi.Invalid
			switch {
			case tt.invalid == "" && err != nil:
				t.Fatalf("Prepare: %v; want no error", err)
			case tt.invalid != "" && (!errors.As(err, &inv) || inv.Field != tt.invalid):
				t.Fatalf("Prepare: %v; want a *capi.Invalid of %s", err, tt.invalid)
			}
			var got map[string]any
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("Prepare gave %q: %v", body, err)
			}
			for path, want := range tt.want {
				if v := at(got, path); !reflect.DeepEqual(v, want) {
					t.Errorf("%s = %#v; want %#v\nin %s", path, v, want, body)
				}
			}
		})
	}
}

// The JSON is exactly Pinterest's shape, in a fixed order.
func TestPrepareJSON(t *testing.T) {
	b := input(func(l *models.Lead, _ *normalize.Input, b *capi.BuildInput) {
		l.Fields = `{"epik":"dj0y"}`
		b.Event.EventName, b.Event.Value = "Purchase", value(250)
	})
	body, err := pinterest.Prepare(b, pinterest.EventName(b.Event.EventName))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"event_name":"checkout","action_source":"web","event_time":1764582000,"event_id":"ls_1",` +
		`"event_source_url":"https://example.com/contact","opt_out":false,` +
		`"user_data":{"em":["` + emailHash + `"],"ph":["` + phoneHash + `"],"country":["` + usHash + `"],` +
		`"client_ip_address":"203.0.113.7","client_user_agent":"Mozilla/5.0","click_id":"dj0y"},` +
		`"custom_data":{"value":"250.00","currency":"USD","order_id":"ls_1"}}`
	if string(body) != want {
		t.Errorf("Prepare =\n%s\nwant\n%s", body, want)
	}
}

func TestEventName(t *testing.T) {
	for _, tt := range []struct{ ours, want string }{
		{"Lead", "lead"},
		{"CompleteRegistration", "signup"},
		{"Subscribe", "subscribe"},
		{"Purchase", "checkout"},
		{"Search", "search"},
		{"ViewContent", "page_visit"},
		{"PageView", "page_visit"},
		{"AddToCart", "add_to_cart"},
		{"InitiateCheckout", "initiate_checkout"},
		{"AddPaymentInfo", "add_payment_info"},
		{"AddToWishlist", "add_to_wishlist"},
		{"Schedule", "custom"},
		{"Contact", "custom"},
		{"QualifiedLead", "custom"},
		{"Demo booked", "custom"},
		{"lead", "custom"}, // our names are Meta's, case and all
		{"", "custom"},
	} {
		if got := pinterest.EventName(tt.ours); got != tt.want {
			t.Errorf("EventName(%q) = %q; want %q", tt.ours, got, tt.want)
		}
	}
}
