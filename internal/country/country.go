package country

import (
	"slices"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // time zones must load on machines without zoneinfo (distroless)
	"unicode"
	"unicode/utf8"

	"github.com/bojanz/currency"
	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
	"golang.org/x/text/unicode/norm"
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

// The lookup tables are built once, on first use.
var (
	once   sync.Once
	all    []Country
	isCode map[string]bool
	byName map[string]string
	short  []string // keys an abbreviation may shorten, in order
)

func load() {
	once.Do(func() {
		all = cldrCountries()
		isCode = make(map[string]bool, len(all))
		for _, c := range all {
			isCode[c.Code] = true
		}
		byName, _ = nameTable(all)
		short = shortKeys(all, byName)
		slices.SortFunc(all, func(x, y Country) int { return strings.Compare(x.Name, y.Name) })
	})
}

// cldrCountries are the ISO codes with CLDR's English names, in code order.
func cldrCountries() []Country {
	namer := display.English.Regions()
	countries := make([]Country, 0, 249)
	for _, code := range strings.Fields(isoCodes) {
		countries = append(countries, Country{Code: code, Name: namer.Name(language.MustParseRegion(code))})
	}
	return countries
}

// nameTable maps folded names to codes: the countries' CLDR names and the
// lists names and everyday, less the ambiguous names. conflicts lists the
// names whose key two codes claim; there must be none (TestNameTable).
func nameTable(countries []Country) (table map[string]string, conflicts []string) {
	table = map[string]string{}
	add := func(name, code string) {
		k := fold(name)
		if prev, ok := table[k]; ok && prev != code {
			conflicts = append(conflicts, name+": "+prev+" and "+code)
		}
		table[k] = code
	}
	for _, c := range countries {
		add(c.Name, c.Code)
	}
	for _, list := range []map[string][]string{names, everyday} {
		for code, ns := range list {
			for _, n := range ns {
				add(n, code)
			}
		}
	}
	for _, n := range ambiguous {
		delete(table, fold(n))
	}
	return table, conflicts
}

// shortKeys are the keys of table an abbreviation may shorten, in order:
// the countries' CLDR names and the everyday names. ISO's official names
// are left out, as people shorten a country's name, not its title ("Can."
// is Canada; "Hash." is not the Hashemite Kingdom of Jordan, nor "For."
// the former Yugoslav Republic of Macedonia).
func shortKeys(countries []Country, table map[string]string) []string {
	var keys []string
	add := func(name string) {
		if k := fold(name); table[k] != "" { // not an ambiguous name
			keys = append(keys, k)
		}
	}
	for _, c := range countries {
		add(c.Name)
	}
	for _, ns := range everyday {
		for _, n := range ns {
			add(n)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// fold is the lookup key of a country name: lower case, accents removed,
// and only its letters and digits kept, so spacing and punctuation ("U.S.A.",
// "Guinea-Bissau", "Côte d’Ivoire") do not matter. Of its words, "the" is
// dropped ("The Gambia", ISO's "Bahamas (the)"), "&" reads "and" and "St"
// reads "Saint" (CLDR writes "St. Lucia" and "Trinidad & Tobago").
func fold(s string) string {
	if !isASCII(s) {
		// Decomposed, an accented letter is its base letter and a mark
		// (unicode.Mn) that the loop below drops.
		s = norm.NFD.String(s)
	}
	key := make([]byte, 0, len(s))
	word := 0 // where the current word starts in key
	endWord := func() {
		switch string(key[word:]) {
		case "the":
			key = key[:word]
		case "st":
			key = append(key[:word], "saint"...)
		}
		word = len(key)
	}
	for _, r := range s {
		switch {
		case 'a' <= r && r <= 'z' || '0' <= r && r <= '9':
			key = append(key, byte(r))
		case 'A' <= r && r <= 'Z':
			key = append(key, byte(r+'a'-'A'))
		case r == '&':
			endWord()
			key = append(key, "and"...)
			endWord()
		case r < utf8.RuneSelf:
			endWord()
		case unicode.Is(unicode.Mn, r):
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			key = append(key, foldLetter(unicode.ToLower(r))...)
		default:
			endWord()
		}
	}
	endWord()
	return string(key)
}

// foldLetter spells the lower-case letters that do not decompose into a
// base letter and a mark the way English writes them without accents.
func foldLetter(r rune) string {
	switch r {
	case 'ø':
		return "o"
	case 'æ':
		return "ae"
	case 'œ':
		return "oe"
	case 'ß':
		return "ss"
	case 'ł':
		return "l"
	case 'đ', 'ð':
		return "d"
	case 'ı':
		return "i"
	case 'þ':
		return "th"
	}
	return string(r)
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// All lists every country by English name.
func All() []Country {
	load()
	return all
}

// Valid reports whether code is an ISO 3166-1 alpha-2 country code (any
// case). An everyday short form that Code reads, such as "UK" for GB, is
// not one: stored as a default country it would be no code at all.
func Valid(code string) bool {
	code = strings.TrimSpace(code)
	cc, ok := Code(code)
	return ok && strings.EqualFold(cc, code)
}

// Code turns a country code or a country name into its upper-case alpha-2
// code: "us", "US", "United States", "USA", "U.S.A.", "United States of
// America" and "U-S" all give "US", and "Can." gives "CA". See the package
// documentation for the names it knows; an ambiguous name ("Korea") gives
// false.
func Code(s string) (string, bool) {
	load()
	s = strings.TrimSpace(s)
	if len(s) == 2 {
		if up := strings.ToUpper(s); isCode[up] {
			return up, true
		}
	}
	k := fold(s)
	if code, ok := byName[k]; ok {
		return code, true
	}
	if code, ok := punctuatedCode(s, k); ok {
		return code, true
	}
	return abbreviation(s, k)
}

// punctuatedCode reads a code written with punctuation or spaces in or
// after it ("C-A", "G@B", "J!P", "Fr."): s's only letters and digits are
// two ASCII letters, they are its key k too, and they are a code. Other
// letters do not count, as fold spells some as two ("ß" is "ss", not South
// Sudan), and a key of other letters is a word ("St." is Saint, "A&E" is
// "aande"). A slash separates two answers rather than joining one ("N/A",
// "M/F", "C/O"), and NA written so ("n.a.") means not available, not Namibia.
func punctuatedCode(s, k string) (string, bool) {
	code := make([]byte, 0, 2)
	for _, r := range s {
		switch {
		case 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z':
			if len(code) == 2 {
				return "", false
			}
			code = append(code, byte(unicode.ToUpper(r)))
		case r == '/' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r):
			return "", false
		}
	}
	if c := string(code); len(c) == 2 && k == strings.ToLower(c) && c != "NA" && isCode[c] {
		return c, true
	}
	return "", false
}

// abbreviation reads one word cut short with a dot ("Can.", "Ger.",
// "Switz."): three letters or more that start the short names (shortKeys)
// of one country only. Without the dot a short word is just a word ("Can"),
// and a start that two countries share gives none ("Aus.", "Kor.").
func abbreviation(s, k string) (string, bool) {
	word, ok := strings.CutSuffix(s, ".")
	if !ok || utf8.RuneCountInString(word) < 3 || len(k) < 3 ||
		strings.IndexFunc(word, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r) }) >= 0 {
		return "", false
	}
	code := ""
	i, _ := slices.BinarySearch(short, k)
	for ; i < len(short) && strings.HasPrefix(short[i], k); i++ {
		if code != "" && byName[short[i]] != code {
			return "", false
		}
		code = byName[short[i]]
	}
	return code, code != ""
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

// ValidCurrency reports whether code is the upper-case ISO 4217 code of a
// currency in use. bojanz/currency follows CLDR's current data (VES, SLE,
// MRU, ZWG, XCG), where golang.org/x/text's table lacks recent codes; the
// codes for no currency (XXX), testing (XTS), precious metals (XAU),
// drawing rights (XDR) and funds (CLF) are not currencies a sale is made in.
func ValidCurrency(code string) bool {
	return code != "" && currency.IsValid(code) && !funds[code] // IsValid takes "" for "no currency"
}

// funds are ISO 4217's fund codes: units of account (Chile's UF, Mexico's
// UDI), not currencies a sale is made in.
var funds = map[string]bool{"BOV": true, "CHE": true, "CHW": true, "CLF": true, "COU": true, "MXV": true, "USN": true, "UYI": true, "UYW": true}

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
