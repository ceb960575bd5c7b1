package junk

import "testing"

func TestFakePhone(t *testing.T) {
	tests := []struct {
		name      string
		phone     string // as the caller passes it: E.164 digits when parsed, else raw
		national  string
		threshold float64
		want      string // "" when real
	}{
		// Fakes.
		{"no phone", "", "", 0, ""},
		{"words", "n/a", "", 0, `phone "n/a" has 0 digits (under 6)`},
		{"short raw", "123", "", 0, `phone "123" has 3 digits (under 6)`},
		{"short raw with text", "ext. 12-34", "", 0, `phone "1234" has 4 digits (under 6)`},
		{"short parsed", "4412345", "12345", 0, `phone "12345" has 5 digits (under 6)`},
		{"one digit", "41", "1", 0, `phone "1" has 1 digit (under 6)`},
		{"same digit US", "11111111111", "1111111111", 0, `phone "1111111111" is one digit repeated`},
		{"zeros", "5500000000000", "00000000000", 0, `phone "00000000000" is one digit repeated`},
		{"same digit GB mobile", "447777777777", "7777777777", 0, `phone "7777777777" is one digit repeated`},
		{"same digit raw", "999-999-9999", "", 0, `phone "9999999999" is one digit repeated`},
		{"same digit MX", "525555555555", "5555555555", 0, `phone "5555555555" is one digit repeated`},
		{"ascending", "11234567890", "1234567890", 0, `phone "1234567890" is a run of sequential digits`},
		{"ascending from 0", "0123456789", "", 0, `phone "0123456789" is a run of sequential digits`},
		{"descending", "9876543210", "", 0, `phone "9876543210" is a run of sequential digits`},
		{"descending from 0", "(098) 765-4321", "", 0, `phone "0987654321" is a run of sequential digits`},
		{"FR 01 23 45 67 89", "33123456789", "123456789", 0, `phone "123456789" is a run of sequential digits`},
		{"short run", "345678", "", 0, `phone "345678" is a run of sequential digits`},
		{"555-0100", "12125550100", "2125550100", 0, `phone "2125550100" is a 555-01xx number reserved for fiction`},
		{"555-0199", "18005550199", "8005550199", 0, `phone "8005550199" is a 555-01xx number reserved for fiction`},
		{"555-01xx raw", "(310) 555-0123", "", 0, `phone "3105550123" is a 555-01xx number reserved for fiction`},
		{"555-01xx raw +1", "+1 415 555 0142", "", 0, `phone "4155550142" is a 555-01xx number reserved for fiction`},
		{"raised threshold", "3349372610", "49372610", 9, `phone "49372610" has 8 digits (under 9)`},

		// Real numbers.
		{"US Empire State", "12127363100", "2127363100", 0, ""},
		{"US Google", "16502530000", "6502530000", 0, ""},
		{"US White House", "12024561111", "2024561111", 0, ""},
		{"US 555-1212 directory", "12125551212", "2125551212", 0, ""},
		{"US 555-2671", "14155552671", "4155552671", 0, ""},
		{"US 555-0200", "12125550200", "2125550200", 0, ""},
		{"US 555-0099", "12125550099", "2125550099", 0, ""},
		{"US raw", "(917) 555-3456", "", 0, ""},
		{"US toll free", "18002752273", "8002752273", 0, ""},
		{"CA Toronto", "14163924357", "4163924357", 0, ""},
		{"GB Parliament", "442072193000", "2072193000", 0, ""},
		{"GB mobile", "447911123456", "7911123456", 0, ""},
		{"GB Manchester", "441612345678", "1612345678", 0, ""},
		{"GB raw", "07911 123456", "", 0, ""},
		{"DE Berlin", "4930901820", "30901820", 0, ""},
		{"DE Munich", "498912345678", "8912345678", 0, ""},
		{"DE mobile", "4915123456789", "15123456789", 0, ""},
		{"DE short landline", "49302270", "302270", 0, ""},
		{"BR São Paulo mobile", "5511912345678", "11912345678", 0, ""},
		{"BR Rio landline", "552123456789", "2123456789", 0, ""},
		{"BR 3333-4444", "551133334444", "1133334444", 0, ""},
		{"TR mobile", "905321234567", "5321234567", 0, ""},
		{"TR Istanbul 555 01", "902125550123", "2125550123", 0, ""},
		{"TR 444 line", "902164444444", "2164444444", 0, ""},
		{"MX Mexico City", "525552500123", "5552500123", 0, ""},
		{"MX 555-01 inside", "525515550123", "5515550123", 0, ""},
		{"MX mobile", "5213312345678", "13312345678", 0, ""},
		{"FR Paris", "33142685300", "142685300", 0, ""},
		{"FR mobile", "33612345678", "612345678", 0, ""},
		{"FR raw", "06 12 34 56 78", "", 0, ""},
		{"ES Madrid", "34912345678", "912345678", 0, ""},
		{"ES mobile", "34600123456", "600123456", 0, ""},
		{"ES wrap in the middle", "34678901234", "678901234", 0, ""},
		{"IS seven digits", "3545512345", "5512345", 0, ""},
		{"raw 10 digits starting 1", "1234509876", "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Phone: tt.phone, PhoneNational: tt.national}
			got := only(t, FakePhone, Setting{Threshold: tt.threshold}, in)
			if got != tt.want {
				t.Errorf("fakePhone(%q, %q) = %q; want %q", tt.phone, tt.national, got, tt.want)
			}
		})
	}
}

func TestSequential(t *testing.T) {
	tests := []struct {
		d    string
		want bool
	}{
		{"123456", true},
		{"1234567890", true},
		{"0123456789", true},
		{"9876543210", true},
		{"0987654321", true},
		{"567890", true},
		{"12345678901", false},
		{"9012345", false},
		{"678901234", false},
		{"1234567891", false},
		{"1123456", false},
		{"0909090", false},
	}
	for _, tt := range tests {
		if got := sequential(tt.d); got != tt.want {
			t.Errorf("sequential(%q) = %v; want %v", tt.d, got, tt.want)
		}
	}
}
