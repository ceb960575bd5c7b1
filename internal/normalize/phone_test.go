package normalize

import "testing"

func TestPhone(t *testing.T) {
	tests := []struct {
		name             string
		raw, lead, def   string
		want, wantRegion string
		ok               bool
	}{
		{"lead country code", "(206) 207-2008", "US", "DE", "12062072008", "US", true},
		{"lead country name", "(206) 207-2008", "United States", "", "12062072008", "US", true},
		{"lead country lowercase", "206.207.2008", "us", "", "12062072008", "US", true},
		{"lead country over default", "020 7183 8750", "gb", "US", "442071838750", "GB", true},
		{"default country when lead has none", "06 12 34 56 78", "", "FR", "33612345678", "FR", true},
		{"default country when lead's is unknown", "030 1234567", "Atlantis", "DE", "49301234567", "DE", true},
		{"plus wins over lead country", "+44 20 7183 8750", "US", "US", "442071838750", "GB", true},
		{"plus without any country", "+49 30 1234567", "", "", "49301234567", "DE", true},
		{"00 wins over lead country", "0044 20 7183 8750", "US", "", "442071838750", "GB", true},
		{"00 without any country", "00 33 6 12 34 56 78", "", "", "33612345678", "FR", true},
		{"fullwidth plus", "＋1 206 207 2008", "", "", "12062072008", "US", true},
		{"US IDD 011", "011 44 20 7183 8750", "US", "", "442071838750", "GB", true},
		{"country code without plus", "1 206 207 2008", "US", "", "12062072008", "US", true},
		{"national trunk prefix dropped", "07700 900123", "GB", "", "447700900123", "GB", true},
		{"region from number, not lead", "(416) 555-0199", "US", "", "14165550199", "CA", true},
		{"non-geographic", "+800 1234 5678", "", "", "80012345678", "", true},
		{"extension dropped", "+1 206 207 2008 ext. 123", "", "", "12062072008", "US", true},
		{"extension x", "206-207-2008 x12", "US", "", "12062072008", "US", true},
		{"vanity letters", "1-800-FLOWERS", "US", "", "18003569377", "US", true},
		{"note in letters", "206 207 2008 (mobile)", "US", "", "12062072008", "US", true},
		{"label before number", "tel: +44 20 7183 8750", "", "", "442071838750", "GB", true},
		{"no country and no plus", "206 207 2008", "", "", "", "", false},
		{"no country, unknown lead country", "206 207 2008", "Atlantis", "", "", "", false},
		{"too short for US", "12345", "US", "", "", "US", false},
		{"too long", "123456123456123456123456", "US", "", "", "US", false},
		{"impossible with plus", "+44 1239 0821300", "", "", "", "GB", false},
		{"letters only", "call me", "US", "", "", "US", false},
		{"unknown calling code", "+999 1234 5678", "", "", "", "", false},
		{"empty", "", "US", "US", "", "", false},
		{"spaces", "   ", "US", "US", "", "", false},
		{"hashed passes through", "CF14FE3C9D73FCB3574D2643988EFB2DB605B1C224725BD322D7D2350467B4DC", "", "",
			"cf14fe3c9d73fcb3574d2643988efb2db605b1c224725bd322d7d2350467b4dc", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, region, ok := Phone(tt.raw, tt.lead, tt.def)
			if got != tt.want || region != tt.wantRegion || ok != tt.ok {
				t.Errorf("Phone(%q, %q, %q) = %q, %q, %v; want %q, %q, %v",
					tt.raw, tt.lead, tt.def, got, region, ok, tt.want, tt.wantRegion, tt.ok)
			}
		})
	}
}

func TestNormalizePhoneProblems(t *testing.T) {
	tests := []struct {
		name, raw, country, def string
		wantNormalized          string
		wantReason              string
		wantRegion              string
	}{
		{"impossible kept raw", " 12345 ", "US", "", "12345", "not a possible phone number for US", "US"},
		{"no country", "206 207 2008", "", "", "206 207 2008", "no country code and no default country", ""},
		{"not a number", "n/a", "US", "", "n/a", "not a phone number", "US"},
		{"impossible with plus", "+44 1239 0821300", "", "", "+44 1239 0821300", "not a possible phone number for GB", "GB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := Normalize(Input{Phone: tt.raw, Country: tt.country, DefaultCountry: tt.def})
			if k.Phone.Normalized != tt.wantNormalized || k.Phone.Hash != "" {
				t.Errorf("Normalize(phone %q).Phone = %+v; want raw %q kept with no hash", tt.raw, k.Phone, tt.wantNormalized)
			}
			if k.PhoneCountry != tt.wantRegion {
				t.Errorf("Normalize(phone %q).PhoneCountry = %q; want %q", tt.raw, k.PhoneCountry, tt.wantRegion)
			}
			want := Problem{Field: "ph", Value: tt.raw, Reason: tt.wantReason}
			if !hasProblem(k, want) {
				t.Errorf("Normalize(phone %q).Problems = %+v; want %+v", tt.raw, k.Problems, want)
			}
			if k.HasContactKey() {
				t.Errorf("Normalize(phone %q).HasContactKey() = true; want false", tt.raw)
			}
		})
	}
}

func hasProblem(k Keys, p Problem) bool {
	for _, q := range k.Problems {
		if q == p {
			return true
		}
	}
	return false
}
