package rule

import (
	"testing"

	"github.com/leadsignal/leadsignal/models"
)

// A lead captured before migration 0016 has no PhoneCountry until the
// backfill reaches it: phone_country reads its match keys meanwhile.
func TestPhoneCountryBeforeBackfill(t *testing.T) {
	notBackfilled := func(l models.Lead) models.Lead {
		l.PhoneCountry = ""
		return l
	}
	tests := []struct {
		name string
		lead models.Lead
		want string
	}{
		{"backfilled", phoned("030 901820", "Germany", "US"), "DE"},
		{"not backfilled", notBackfilled(phoned("030 901820", "Germany", "US")), "DE"},
		{"not backfilled, account's country", notBackfilled(phoned("416 222 3333", "", "US")), "CA"},
		{"the column wins", func() models.Lead {
			l := phoned("030 901820", "Germany", "US")
			l.PhoneCountry = "AT"
			return l
		}(), "AT"},
		{"no phone", notBackfilled(phoned("", "", "US")), ""},
		{"phone that did not parse", func() models.Lead {
			l := notBackfilled(phoned("030 901820", "Germany", "US"))
			l.PhoneE164 = ""
			return l
		}(), ""},
		{"broken match keys", func() models.Lead {
			l := notBackfilled(phoned("030 901820", "Germany", "US"))
			l.MatchKeys = `{"ph":`
			return l
		}(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := value(t, "phone_country", tt.lead); got != tt.want {
				t.Errorf("phone_country of the lead = %q; want %q", got, tt.want)
			}
			if tt.want == "" {
				return
			}
			if !holds(t, Condition{Field: "phone_country", MatchType: InList, Pattern: tt.want + ", US"}, tt.lead) {
				t.Errorf("phone_country in_list %q, US = false; want true", tt.want)
			}
		})
	}
}

// The match keys are parsed once per Lead, and only for a lead whose
// column is empty.
func TestPhoneCountryParsesOnce(t *testing.T) {
	l := phoned("030 901820", "Germany", "US")
	v := NewLead(&l)
	if got := v.phoneCountry(); got != "DE" || v.done&haveKeys != 0 {
		t.Errorf("phoneCountry() = %q, parsed %v; want DE from the column, not parsed", got, v.done&haveKeys != 0)
	}

	l.PhoneCountry = ""
	v.Reset(&l)
	if got := v.phoneCountry(); got != "DE" || v.done&haveKeys == 0 {
		t.Errorf("phoneCountry() = %q, parsed %v; want DE from the match keys", got, v.done&haveKeys != 0)
	}
	l.MatchKeys = "{}"
	if got := v.phoneCountry(); got != "DE" {
		t.Errorf("phoneCountry() again = %q; want DE, worked out once", got)
	}
	v.Reset(&l)
	if got := v.phoneCountry(); got != "" {
		t.Errorf("after Reset, phoneCountry() = %q; want \"\": the previous lead's region must go", got)
	}
}
