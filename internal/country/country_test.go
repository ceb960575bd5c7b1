package country

import "testing"

func TestCode(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"us", "US", true},
		{"US", "US", true},
		{" de ", "DE", true},
		{"United States", "US", true},
		{"united  kingdom", "GB", true},
		{"USA", "US", true},
		{"Türkiye", "TR", true},
		{"Germany", "DE", true},
		{"XX", "", false},
		{"EU", "", false}, // a region, not a country
		{"", "", false},
		{"Atlantis", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := Code(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Code(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestValid(t *testing.T) {
	for in, want := range map[string]bool{"US": true, "br": true, "United States": false, "ZZ": false, "": false} {
		if got := Valid(in); got != want {
			t.Errorf("Valid(%q) = %v; want %v", in, got, want)
		}
	}
	if n := len(All()); n != 249 {
		t.Errorf("len(All()) = %d; want 249", n)
	}
}

func TestTimezoneAndCurrency(t *testing.T) {
	for in, want := range map[string]bool{"UTC": true, "Europe/Berlin": true, "America/Sao_Paulo": true, "Mars/Base": false, "": false, "Local": false} {
		if got := ValidTimezone(in); got != want {
			t.Errorf("ValidTimezone(%q) = %v; want %v", in, got, want)
		}
	}
	for _, tz := range CommonTimezones {
		if !ValidTimezone(tz) {
			t.Errorf("CommonTimezones has invalid %q", tz)
		}
	}
	for in, want := range map[string]bool{"USD": true, "EUR": true, "usd": false, "XYZ": false, "US": false} {
		if got := ValidCurrency(in); got != want {
			t.Errorf("ValidCurrency(%q) = %v; want %v", in, got, want)
		}
	}
	for _, c := range CommonCurrencies {
		if !ValidCurrency(c) {
			t.Errorf("CommonCurrencies has invalid %q", c)
		}
	}
}
