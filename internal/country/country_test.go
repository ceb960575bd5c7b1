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

		// ISO 3166's short and official names.
		{"Korea, Republic of", "KR", true},
		{"Korea (the Republic of)", "KR", true},
		{"Republic of Korea", "KR", true},
		{"Korea, Democratic People's Republic of", "KP", true},
		{"Viet Nam", "VN", true},
		{"Iran (Islamic Republic of)", "IR", true},
		{"Iran, Islamic Republic of", "IR", true},
		{"Bolivia (Plurinational State of)", "BO", true},
		{"Tanzania, United Republic of", "TZ", true},
		{"United Republic of Tanzania", "TZ", true},
		{"Russian Federation", "RU", true},
		{"Lao People's Democratic Republic", "LA", true},
		{"Netherlands (Kingdom of the)", "NL", true},
		{"Kingdom of the Netherlands", "NL", true},
		{"United Kingdom of Great Britain and Northern Ireland", "GB", true},
		{"United States of America", "US", true},
		{"United States of America (the)", "US", true},
		{"Venezuela (Bolivarian Republic of)", "VE", true},
		{"Micronesia (Federated States of)", "FM", true},
		{"Moldova, Republic of", "MD", true},
		{"Palestine, State of", "PS", true},
		{"Syrian Arab Republic", "SY", true},
		{"Taiwan, Province of China", "TW", true},
		{"Congo, Democratic Republic of the", "CD", true},
		{"Democratic Republic of the Congo", "CD", true},
		{"Democratic Republic of Congo", "CD", true},
		{"Virgin Islands (British)", "VG", true},
		{"Virgin Islands (U.S.)", "VI", true},
		{"Holy See", "VA", true},
		{"Cabo Verde", "CV", true},
		{"Eswatini", "SZ", true},
		{"North Macedonia", "MK", true},
		{"Brunei Darussalam", "BN", true},
		{"Saint Martin (French part)", "MF", true},
		{"Sint Maarten (Dutch part)", "SX", true},
		{"Federal Republic of Germany", "DE", true},
		{"People's Republic of China", "CN", true},
		{"Czech Republic", "CZ", true},

		// Names ISO 3166 gave before, which old country lists still offer.
		{"Holy See (Vatican City State)", "VA", true},
		{"Macedonia, the former Yugoslav Republic of", "MK", true},
		{"The former Yugoslav Republic of Macedonia", "MK", true},
		{"Libyan Arab Jamahiriya", "LY", true},
		{"Palestinian Territory, Occupied", "PS", true},

		// CLDR's English names.
		{"Hong Kong SAR China", "HK", true},
		{"Congo - Kinshasa", "CD", true},
		{"Côte d’Ivoire", "CI", true},
		{"São Tomé & Príncipe", "ST", true},
		{"St. Vincent & Grenadines", "VC", true},
		{"Åland Islands", "AX", true},
		{"Curaçao", "CW", true},
		{"Réunion", "RE", true},
		{"Myanmar (Burma)", "MM", true},

		// Everyday names.
		{"Hong Kong", "HK", true},
		{"Macau", "MO", true},
		{"Macao", "MO", true},
		{"South Korea", "KR", true},
		{"North Korea", "KP", true},
		{"Ivory Coast", "CI", true},
		{"Cape Verde", "CV", true},
		{"Swaziland", "SZ", true},
		{"Burma", "MM", true},
		{"Myanmar", "MM", true},
		{"Holland", "NL", true},
		{"The Netherlands", "NL", true},
		{"UAE", "AE", true},
		{"UK", "GB", true},
		{"Great Britain", "GB", true},
		{"England", "GB", true},
		{"Scotland", "GB", true},
		{"Wales", "GB", true},
		{"Northern Ireland", "GB", true},
		{"Ireland", "IE", true},
		{"Russia", "RU", true},
		{"Vietnam", "VN", true},
		{"Laos", "LA", true},
		{"Syria", "SY", true},
		{"Palestine", "PS", true},
		{"Vatican", "VA", true},
		{"Vatican City", "VA", true},
		{"Micronesia", "FM", true},
		{"Moldova", "MD", true},
		{"Turkey", "TR", true},
		{"TÜRKIYE", "TR", true},
		{"turkiye", "TR", true},
		{"DR Congo", "CD", true},
		{"Congo-Kinshasa", "CD", true},
		{"Republic of the Congo", "CG", true},
		{"Congo-Brazzaville", "CG", true},
		{"East Timor", "TL", true},
		{"Timor-Leste", "TL", true},
		{"The Gambia", "GM", true},
		{"Gambia", "GM", true},
		{"The Bahamas", "BS", true},
		{"St Lucia", "LC", true},
		{"Saint Lucia", "LC", true},
		{"St. Kitts and Nevis", "KN", true},
		{"Trinidad and Tobago", "TT", true},
		{"Bosnia and Herzegovina", "BA", true},
		{"Macedonia", "MK", true},
		{"Guinea", "GN", true},
		{"Guinea-Bissau", "GW", true},
		{"Equatorial Guinea", "GQ", true},
		{"Deutschland", "DE", true},
		{"España", "ES", true},
		{"Espana", "ES", true},

		// Punctuation, spacing, case and accents.
		{"U.S.A.", "US", true},
		{"U.S.", "US", true},
		{"u.s.a", "US", true},
		{"United-Kingdom", "GB", true},
		{"united  states", "US", true},
		{"UNITED STATES OF AMERICA", "US", true},
		{"Côte d’Ivoire", "CI", true},
		{"Côte d'Ivoire", "CI", true},
		{"Cote d'Ivoire", "CI", true},
		{"cote divoire", "CI", true},
		{"Co\u0302te d'Ivoire", "CI", true}, // decomposed: o and a combining circumflex
		{"Sao Tome and Principe", "ST", true},
		{"Hongkong", "HK", true},
		{"\tNew Zealand\n", "NZ", true},
		{"UnitedStatesAmerica", "US", true},
		{"United States America", "US", true},

		// A code written with punctuation or spaces.
		{"C-A", "CA", true},
		{"G@B", "GB", true},
		{"J!P", "JP", true},
		{"Fr.", "FR", true},
		{"G.B.", "GB", true},
		{"c a", "CA", true},
		{"U-S", "US", true},
		{"(DE)", "DE", true},
		{"G-X", "", false},      // not a code
		{"C-A-N", "", false},    // three letters
		{"U2", "", false},       // a digit
		{"M/F", "", false},      // a slash separates two answers: not Saint Martin
		{"C/O", "", false},      // care of, not Colombia
		{"n.a.", "", false},     // not available, not Namibia
		{"N.A.", "", false},     // the same
		{"St.", "", false},      // Saint, not São Tomé
		{"A&E", "", false},      // "and" is a word
		{"ß", "", false},        // fold spells it "ss", not South Sudan
		{"Æ", "", false},        // nor "ae" the Emirates
		{"Ca\u0301", "", false}, // an accented letter is no code letter

		// One word cut short with a dot: the one country whose name it starts.
		{"Can.", "CA", true},
		{"Ger.", "DE", true},
		{"Switz.", "CH", true},
		{"Eng.", "GB", true},
		{"Vat.", "VA", true},
		{"Can", "", false},     // without the dot, a word
		{"Ja.", "", false},     // fewer than three letters, and no code
		{"Aus.", "", false},    // Australia or Austria
		{"Kor.", "", false},    // either Korea
		{"Congo.", "", false},  // either Congo
		{"Virgin.", "", false}, // either Virgin Islands
		{"Uni.", "", false},    // United States, Kingdom or Arab Emirates
		{"For.", "", false},    // official names are not shortened ("former Yugoslav...")
		{"Hash.", "", false},   // nor titles (Hashemite Kingdom of Jordan)
		{"Gr. Britain", "", false},
		{"Xyz.", "", false},

		// Ambiguous: two countries answer to these (see doc.go).
		{"Korea", "", false},
		{"Congo", "", false},
		{"Virgin Islands", "", false},

		// Not countries.
		{"Narnia", "", false},
		{"ZZ", "", false},
		{"UU", "", false},
		{"the", "", false},
		{"St.", "", false},
		{"...", "", false},
		{"United", "", false},
		{"Republic of", "", false},
		{"N/A", "", false},
		{"Random", "", false},
		{"Random.", "", false},
		{"Lorem ipsum", "", false},
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

// TestNameTable: no name is claimed by two countries, and each country's
// CLDR name finds its code again.
func TestNameTable(t *testing.T) {
	load()
	countries := cldrCountries()
	table, conflicts := nameTable(countries)
	for _, c := range conflicts {
		t.Errorf("name claimed twice: %s", c)
	}
	for _, c := range countries {
		if got := table[fold(c.Name)]; got != c.Code {
			t.Errorf("Code(%q) = %q; want %q", c.Name, got, c.Code)
		}
	}
	for _, list := range []map[string][]string{names, everyday} {
		for code := range list {
			if !isCode[code] {
				t.Errorf("names for %q, which is not an ISO 3166-1 code", code)
			}
		}
	}
}

func TestFold(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"United States", "unitedstates"},
		{"U.S.A.", "usa"},
		{"Côte d’Ivoire", "cotedivoire"},
		{"Trinidad & Tobago", "trinidadandtobago"},
		{"Trinidad&Tobago", "trinidadandtobago"},
		{"St. Lucia", "saintlucia"},
		{"Saint Lucia", "saintlucia"},
		{"Bahamas (the)", "bahamas"},
		{"The Gambia", "gambia"},
		{"Theodore", "theodore"}, // "the" is dropped as a word only
		{"Stanley", "stanley"},
		{"Føroyar", "foroyar"},
		{"TÜRKİYE", "turkiye"},
		{"Ελλάδα", "ελλαδα"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := fold(tt.in); got != tt.want {
				t.Errorf("fold(%q) = %q; want %q", tt.in, got, tt.want)
			}
		})
	}
}

// BenchmarkCode is the per-lead cost of reading a country.
func BenchmarkCode(b *testing.B) {
	for _, in := range []string{"US", "United States", "Côte d’Ivoire", "Narnia"} {
		b.Run(in, func(b *testing.B) {
			for b.Loop() {
				Code(in)
			}
		})
	}
}

func TestValid(t *testing.T) {
	for in, want := range map[string]bool{"US": true, "br": true, " gb ": true, "United States": false, "UK": false, "ZZ": false, "": false, "C-A": false, "Can.": false} {
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
	for in, want := range map[string]bool{
		"USD": true, "EUR": true, "XOF": true, "VES": true, "SLE": true, "MRU": true, "ZWG": true,
		"usd": false, "XYZ": false, "US": false, "XXX": false, "XTS": false, "XAU": false, "XDR": false,
		"DEM": false, "HRK": false, "": false, "USDX": false, "CLF": false, "USN": false, "BOV": false} {
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
