// Package country knows the ISO 3166-1 alpha-2 country codes, their English
// names, and the IANA time zones and ISO 4217 currencies offered in forms.
package country

import (
	"slices"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // time zones must load on machines without zoneinfo (distroless)

	"golang.org/x/text/currency"
	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
)

// Country is a country code with its English name.
type Country struct {
	Code string // ISO 3166-1 alpha-2, upper case
	Name string
}

// isoCodes are the 249 officially assigned ISO 3166-1 alpha-2 codes. The
// language package also knows reserved and withdrawn codes (UK, AC, SU...),
// which are not countries a lead or an account can have.
const isoCodes = `AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ
BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ
CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ
EC EE EG EH ER ES ET FI FJ FK FM FO FR
GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU
ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ
LA LB LC LI LK LR LS LT LU LV LY
MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ
NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY
QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ
TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ
VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW`

var (
	once   sync.Once
	all    []Country
	byName map[string]string
)

func load() {
	once.Do(func() {
		byName = map[string]string{}
		names := display.English.Regions()
		for _, code := range strings.Fields(isoCodes) {
			r := language.MustParseRegion(code)
			name := names.Name(r)
			all = append(all, Country{Code: code, Name: name})
			byName[fold(name)] = code
		}
		slices.SortFunc(all, func(x, y Country) int { return strings.Compare(x.Name, y.Name) })
		// Everyday names that differ from CLDR's English display names.
		for name, code := range map[string]string{
			"usa": "US", "united states of america": "US", "america": "US",
			"uk": "GB", "great britain": "GB", "england": "GB", "scotland": "GB", "wales": "GB",
			"turkey": "TR", "türkiye": "TR", "turkiye": "TR", "holland": "NL",
			"czech republic": "CZ", "russia": "RU", "south korea": "KR", "korea": "KR",
			"uae": "AE", "deutschland": "DE", "brasil": "BR", "españa": "ES", "espana": "ES",
			"méxico": "MX", "ivory coast": "CI",
		} {
			byName[name] = code
		}
	})
}

func fold(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

// All lists every country by English name.
func All() []Country {
	load()
	return all
}

// Valid reports whether code is an ISO 3166-1 alpha-2 country code (any case).
func Valid(code string) bool {
	_, ok := Code(code)
	return ok && len(strings.TrimSpace(code)) == 2
}

// Code turns a country code or an English country name into its upper-case
// alpha-2 code: "us", "US", "United States" and "USA" all give "US".
func Code(s string) (string, bool) {
	load()
	s = strings.TrimSpace(s)
	if len(s) == 2 {
		up := strings.ToUpper(s)
		if i := slices.IndexFunc(all, func(c Country) bool { return c.Code == up }); i >= 0 {
			return up, true
		}
	}
	code, ok := byName[fold(s)]
	return code, ok
}

// Name is the English name of a code, or the code itself when unknown.
func Name(code string) string {
	load()
	for _, c := range all {
		if c.Code == code {
			return c.Name
		}
	}
	return code
}

// ValidTimezone reports whether name is an IANA time zone.
func ValidTimezone(name string) bool {
	if name == "" || name == "Local" {
		return false
	}
	_, err := time.LoadLocation(name)
	return err == nil
}

// ValidCurrency reports whether code is an ISO 4217 currency code in upper case.
func ValidCurrency(code string) bool {
	if len(code) != 3 || strings.ToUpper(code) != code {
		return false
	}
	_, err := currency.ParseISO(code)
	return err == nil
}

// CommonTimezones are offered as suggestions in forms; any IANA name is accepted.
var CommonTimezones = []string{
	"UTC",
	"America/New_York", "America/Chicago", "America/Denver", "America/Phoenix", "America/Los_Angeles",
	"America/Anchorage", "Pacific/Honolulu", "America/Toronto", "America/Vancouver", "America/Mexico_City",
	"America/Bogota", "America/Lima", "America/Santiago", "America/Sao_Paulo", "America/Argentina/Buenos_Aires",
	"Europe/London", "Europe/Dublin", "Europe/Lisbon", "Europe/Madrid", "Europe/Paris", "Europe/Berlin",
	"Europe/Amsterdam", "Europe/Brussels", "Europe/Zurich", "Europe/Rome", "Europe/Vienna", "Europe/Stockholm",
	"Europe/Warsaw", "Europe/Athens", "Europe/Istanbul", "Europe/Kyiv", "Africa/Cairo", "Africa/Johannesburg",
	"Africa/Lagos", "Africa/Nairobi", "Asia/Dubai", "Asia/Riyadh", "Asia/Tel_Aviv", "Asia/Karachi",
	"Asia/Kolkata", "Asia/Dhaka", "Asia/Bangkok", "Asia/Jakarta", "Asia/Singapore", "Asia/Manila",
	"Asia/Hong_Kong", "Asia/Shanghai", "Asia/Seoul", "Asia/Tokyo", "Australia/Perth", "Australia/Sydney",
	"Pacific/Auckland",
}

// CommonCurrencies are offered as suggestions in forms; any ISO 4217 code is accepted.
var CommonCurrencies = []string{
	"USD", "EUR", "GBP", "CAD", "AUD", "NZD", "BRL", "MXN", "TRY", "INR", "JPY", "CHF",
	"SEK", "NOK", "DKK", "PLN", "ZAR", "AED", "SAR", "SGD", "HKD", "COP", "ARS", "CLP",
}
