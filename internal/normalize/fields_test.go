package normalize

import (
	"testing"
	"time"
)

// single is a table row for a one-argument normaliser.
type single struct {
	in   string
	want string
	ok   bool
}

func runSingle(t *testing.T, name string, f func(string) (string, bool), tests []single) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := f(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("%s(%q) = %q, %v; want %q, %v", name, tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

const someHash = "a665a45920422f9d417e4867efdc4fb8a04a1f3fff1fa07e998e86f7f7a27ae3"

func TestEmail(t *testing.T) {
	runSingle(t, "Email", Email, []single{
		{"  Joe.Smith@Example.COM ", "joe.smith@example.com", true},
		{"a+tag@mail.example.co.uk", "a+tag@mail.example.co.uk", true},
		{"o'brien@example.ie", "o'brien@example.ie", true},
		{"JOSÉ@exämple.de", "josé@exämple.de", true},
		{"", "", false},
		{"   ", "", false},
		{"joe", "", false},
		{"joe@example", "", false},
		{"joe@example.c", "", false},
		{"@example.com", "", false},
		{"joe@@example.com", "", false},
		{"joe@example..com", "", false},
		{"joe.@example.com", "", false},
		{".joe@example.com", "", false},
		{"joe smith@example.com", "", false},
		{"joe@exa mple.com", "", false},
		{"joe@-example.com", "", false},
		{"joe@example.com/", "", false},
		{`"joe"@example.com`, "", false},
		{"joe(x)@example.com", "", false},
		{"joe@[127.0.0.1]", "", false},
		{someHash, someHash, true},
	})
}

func TestName(t *testing.T) {
	runSingle(t, "Name", Name, []single{
		{"John", "john", true},
		{"  Smith  ", "smith", true},
		{"Mary-Jane", "maryjane", true},
		{"O'Neil", "oneil", true},
		{"O’Neil", "oneil", true},
		{"van der Berg", "vanderberg", true},
		{"José", "josé", true},
		{"Jose\u0301", "josé", true}, // decomposed é is composed (NFC) before hashing
		{"Müller", "müller", true},
		{"ÇAĞLAR", "çağlar", true},
		{"Zoë ♥", "zoë", true},
		{"Анна", "анна", true},
		{"王小明", "王小明", true},
		{"प्रिया", "प्रिया", true}, // vowel signs are combining marks and stay
		{"John 3", "john3", true},
		{"-", "", false},
		{"", "", false},
		{someHash, someHash, true},
	})
}

func TestCity(t *testing.T) {
	runSingle(t, "City", City, []single{
		{"Menlo Park", "menlopark", true},
		{"Washington D.C", "washingtondc", true},
		{"Stanley Park 1234", "stanleypark", true},
		{"San José", "sanjosé", true},
		{"Saint-Étienne", "saintétienne", true},
		{"İstanbul", "istanbul", true},
		{"12345", "", false},
		{"", "", false},
		{someHash, someHash, true},
	})
}

func TestState(t *testing.T) {
	tests := []struct {
		in, country string
		want        string
		ok          bool
	}{
		{"California", "US", "ca", true},
		{"california", "", "ca", true},
		{"CA", "US", "ca", true},
		{"ca", "United States", "ca", true},
		{" New  York ", "us", "ny", true},
		{"North Carolina", "", "nc", true},
		{"District of Columbia", "US", "dc", true},
		{"Washington, D.C.", "US", "dc", true},
		{"Washington", "US", "wa", true},
		{"Puerto Rico", "US", "pr", true},
		{"U.S. Virgin Islands", "US", "vi", true},
		{"Guam", "", "gu", true},
		{"Armed Forces Europe", "US", "ae", true},
		{"Calif.", "US", "calif", true}, // no state name: cleaned, not guessed
		{"California", "MX", "california", true},
		{"Georgia", "GE", "georgia", true},
		{"Georgia", "Atlantis", "georgia", true}, // a country was given, just not a known one
		{"Île-de-France", "FR", "îledefrance", true},
		{"75", "FR", "75", true},
		{"Bayern", "Germany", "bayern", true},
		{"...", "US", "", false},
		{"", "US", "", false},
		{someHash, "US", someHash, true},
	}
	for _, tt := range tests {
		t.Run(tt.in+"/"+tt.country, func(t *testing.T) {
			got, ok := State(tt.in, tt.country)
			if got != tt.want || ok != tt.ok {
				t.Errorf("State(%q, %q) = %q, %v; want %q, %v", tt.in, tt.country, got, ok, tt.want, tt.ok)
			}
		})
	}
	// Every state and territory has a code, and every code maps to itself.
	if n := len(usStates); n < 2*(50+1+6+3) {
		t.Errorf("len(usStates) = %d; want names and codes of 50 states, DC, 6 territories, 3 armed forces", n)
	}
	for name, code := range usStates {
		if len(code) != 2 || usStates[code] != code {
			t.Errorf("usStates[%q] = %q; want a 2-letter code that maps to itself", name, code)
		}
	}
}

func TestZip(t *testing.T) {
	tests := []struct {
		in, country string
		want        string
		ok          bool
	}{
		{"98121", "US", "98121", true},
		{"  98121", "", "98121", true},
		{"98121-4892", "US", "98121", true},
		{"981214892", "US", "98121", true},
		{"981214892", "", "98121", true},
		{"NR9 5AL", "GB", "nr95al", true},
		{"SW1A 1AA", "", "sw1a1aa", true},
		{"H0H 0H0", "CA", "h0h0h0", true},
		{"1000-001", "PT", "1000", true},
		{"123456789", "BR", "123456789", true}, // the 5-digit cut is for US ZIP+4 only
		{"75008", "France", "75008", true},
		{"A", "", "", false},
		{"-1234", "", "", false},
		{"", "US", "", false},
		{someHash, "", someHash, true},
	}
	for _, tt := range tests {
		t.Run(tt.in+"/"+tt.country, func(t *testing.T) {
			got, ok := Zip(tt.in, tt.country)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Zip(%q, %q) = %q, %v; want %q, %v", tt.in, tt.country, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestCountry(t *testing.T) {
	runSingle(t, "Country", Country, []single{
		{"US", "us", true},
		{"  us ", "us", true},
		{"US!", "us", true},
		{"U.S.A.", "us", true},
		{"United States", "us", true},
		{"United States of America", "us", true},
		{"USA", "us", true},
		{"Germany", "de", true},
		{"germany", "de", true},
		{"United Kingdom", "gb", true},
		{"UK", "gb", true},
		{"Türkiye", "tr", true},
		{"Brasil", "br", true},
		{"Guinea-Bissau", "gw", true},
		{"UU", "", false},
		{"EU", "", false},
		{"Atlantis", "", false},
		{"", "", false},
		{someHash, someHash, true},
	})
}

func TestGender(t *testing.T) {
	runSingle(t, "Gender", Gender, []single{
		{"m", "m", true},
		{"M", "m", true},
		{" Male ", "m", true},
		{"man", "m", true},
		{"Mr.", "m", true},
		{"masculino", "m", true},
		{"Männlich", "m", true},
		{"homme", "m", true},
		{"Erkek", "m", true},
		{"f", "f", true},
		{"F", "f", true},
		{"FEMALE", "f", true},
		{"woman", "f", true},
		{"femenino", "f", true},
		{"feminino", "f", true},
		{"weiblich", "f", true},
		{"w", "f", true},
		{"femme", "f", true},
		{"Kadın", "f", true},
		{"KADIN", "f", true},
		{"x", "", false},
		{"non-binary", "", false},
		{"h", "", false},
		{"", "", false},
		{someHash, someHash, true},
	})
}

func TestDateOfBirth(t *testing.T) {
	runSingle(t, "DateOfBirth", DateOfBirth, []single{
		{"1990-01-02", "19900102", true},
		{"1990-1-2", "19900102", true},
		{"1990/01/02", "19900102", true},
		{"1990.01.02", "19900102", true},
		{"19900102", "19900102", true},
		{"1990-01-02T23:30:00-05:00", "19900102", true}, // the written date, never shifted by the zone
		{"1990-01-02 00:00:00", "19900102", true},
		{"25/12/1990", "19901225", true}, // DD/MM/YYYY: 25 cannot be a month
		{"12/25/1990", "19901225", true}, // MM/DD/YYYY: 25 cannot be a month
		{"25.12.1990", "19901225", true},
		{"05/05/1990", "19900505", true}, // either order gives the same date
		{"2000-02-29", "20000229", true},
		{"03/04/1990", "", false}, // ambiguous: 3 April or March 4
		{"1900-02-29", "", false},
		{"1990-13-01", "", false},
		{"1990-02-30", "", false},
		{"1990-00-10", "", false},
		{"31/31/1990", "", false},
		{"18991231", "", false},
		{"21010101", "", false},
		{"01021990", "", false}, // 8 digits are YYYYMMDD only
		{"02/01/90", "", false},
		{"January 2, 1990", "", false},
		{"", "", false},
		{someHash, someHash, true},
	})
}

func TestDateOfBirthInFuture(t *testing.T) {
	captured := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		in         string
		wantReason string
	}{
		{"2026-03-01", ""},
		{"2026-03-02", "date of birth is after the lead was captured"},
	} {
		k := Normalize(Input{DateOfBirth: tt.in, CapturedAt: captured})
		gotReason := ""
		if len(k.Problems) > 0 {
			gotReason = k.Problems[0].Reason
		}
		if gotReason != tt.wantReason {
			t.Errorf("Normalize(db %q at %v) problem = %q; want %q", tt.in, captured, gotReason, tt.wantReason)
		}
	}
}

func TestExternalID(t *testing.T) {
	runSingle(t, "ExternalID", ExternalID, []single{
		{"  User123  ", "user123", true},
		{"Customer-ABC-123", "customer-abc-123", true},
		{"user 123", "user123", true},
		{"550E8400-E29B-41D4-A716-446655440000", "550e8400-e29b-41d4-a716-446655440000", true},
		{"\t\n", "", false},
		{"", "", false},
		{"A665A45920422F9D417E4867EFDC4FB8A04A1F3FFF1FA07E998E86F7F7A27AE3", someHash, true},
	})
}

func TestIsHashed(t *testing.T) {
	for in, want := range map[string]bool{
		someHash: true,
		"A665A45920422F9D417E4867EFDC4FB8A04A1F3FFF1FA07E998E86F7F7A27AE3": true,
		someHash[:63]:                      false,
		someHash + "0":                     false,
		"g" + someHash[1:]:                 false,
		" " + someHash[1:]:                 false,
		"d41d8cd98f00b204e9800998ecf8427e": false, // MD5 is not passed through
		"":                                 false,
	} {
		if got := IsHashed(in); got != want {
			t.Errorf("IsHashed(%q) = %v; want %v", in, got, want)
		}
	}
}

func TestHash(t *testing.T) {
	if got, want := Hash("joe@eg.com"), "8830eedd6c6b5ea97d181563a349476ca1bb25ace1f94b5c5e48d9cad727941b"; got != want {
		t.Errorf("Hash(%q) = %q; want %q", "joe@eg.com", got, want)
	}
}
