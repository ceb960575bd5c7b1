package views

import (
	"math"
	"testing"
)

func TestStageValue(t *testing.T) {
	tests := []struct {
		value    float64
		currency string
		want     string
	}{
		{0, "USD", "0.00 USD"},
		{1250.5, "EUR", "1250.50 EUR"},
		{1e12, "USD", "1000000000000.00 USD"},
		{999999999999999, "USD", "999999999999999.00 USD"},
		// Stored before values were bounded: a few characters, not 309.
		{1e308, "XXX", "1e+308 XXX"},
		{1234567890123456789, "USD", "1.23457e+18 USD"},
		{math.Inf(1), "USD", "+Inf USD"},
	}
	for _, tt := range tests {
		if got := StageValue(tt.value, tt.currency); got != tt.want {
			t.Errorf("StageValue(%g, %q) = %q; want %q", tt.value, tt.currency, got, tt.want)
		}
	}
}
