package stagecsv_test

import (
	"testing"

	"github.com/leadsignal/leadsignal/internal/stagecsv"
)

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		sign string
		ok   bool
	}{
		{"1.234,56", 1234.56, "", true},
		{"$1,200.00", 1200, "$", true},
		{"1 200 €", 1200, "€", true},
		{"1\u00a0200,50\u00a0€", 1200.5, "€", true},
		{"1,234.56 USD", 1234.56, "USD", true},
		{"€1.200", 1200, "€", true},
		{"1.200", 1200, "", true},
		{"0.125", 0.125, "", true},
		{"12.5", 12.5, "", true},
		{"1234.567", 1234.567, "", true},
		{"R$ 1.234,56", 1234.56, "R$", true},
		{"£500", 500, "£", true},
		{"eur 99", 99, "EUR", true},
		{"US$ 10", 10, "US$", true},
		{"12 bananas", 0, "", false},
		{"$ 5 USD", 0, "", false},
		{"1.2.3,4.5", 0, "", false},
		{"", 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, sign, ok := stagecsv.ParseAmount(tt.in)
			if ok != tt.ok || got != tt.want || sign != tt.sign {
				t.Errorf("ParseAmount(%q) = %v, %q, %v; want %v, %q, %v", tt.in, got, sign, ok, tt.want, tt.sign, tt.ok)
			}
		})
	}
}

func TestSignCurrency(t *testing.T) {
	tests := []struct{ sign, account, want string }{
		{"$", "USD", "USD"},
		{"$", "CAD", "CAD"},
		{"$", "aud", "AUD"},
		{"$", "EUR", "USD"},
		{"$", "", "USD"},
		{"US$", "CAD", "USD"},
		{"€", "USD", "EUR"},
		{"GBP", "USD", "GBP"},
	}
	for _, tt := range tests {
		if got := stagecsv.SignCurrency(tt.sign, tt.account); got != tt.want {
			t.Errorf("SignCurrency(%q, %q) = %q; want %q", tt.sign, tt.account, got, tt.want)
		}
	}
}
