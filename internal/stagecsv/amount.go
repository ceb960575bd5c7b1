package stagecsv

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/leadsignal/leadsignal/internal/country"
)

// ParseNumber reads a deal value as CRMs and spreadsheets write it
// (ParseAmount), leaving out its currency.
func ParseNumber(s string) (float64, bool) {
	v, _, ok := ParseAmount(s)
	return v, ok
}

// ParseAmount reads a deal value as CRMs and spreadsheets write it, and
// the currency sign or code written with it ("" for none):
//   - a currency sign or ISO code before or after the number, with or
//     without a space: $1,200.00, 1 200 €, 1,234.56 USD, €1.200, R$ 50;
//   - spaces or apostrophes between thousands;
//   - commas and dots: with both, the last is the decimal point (1,200.50
//     and 1.200,50); a lone comma or dot followed by exactly three digits
//     separates thousands (1,200 and 1.200 are 1200; 0,125 and 0.125 keep
//     their decimals), otherwise it is the decimal point (12,5 and 12.5);
//     several of one separate thousands (1.200.000).
//
// The sign is as written ("$", "€", "US$") or an upper-cased ISO code;
// Currency reads it.
func ParseAmount(s string) (v float64, sign string, ok bool) {
	s = strings.TrimSpace(s)
	num := strings.IndexFunc(s, func(r rune) bool { return r >= '0' && r <= '9' || r == '-' || r == '.' || r == ',' })
	end := strings.LastIndexFunc(s, func(r rune) bool { return r >= '0' && r <= '9' })
	if num < 0 || end < num {
		return 0, "", false
	}
	before, after := strings.TrimSpace(s[:num]), strings.TrimSpace(s[end+1:])
	if before != "" && after != "" {
		return 0, "", false
	}
	sign = before + after
	if sign != "" && !knownSign(sign) {
		return 0, "", false
	}
	n := strings.NewReplacer(" ", "", "\u00a0", "", "\u202f", "", "'", "", "\u2019", "").Replace(s[num : end+1])
	comma, dot := strings.LastIndexByte(n, ','), strings.LastIndexByte(n, '.')
	thousands := func(sep byte) bool {
		i := strings.LastIndexByte(n, sep)
		lead := strings.TrimPrefix(n[:i], "-")
		return len(n)-i-1 == 3 && len(lead) >= 1 && len(lead) <= 3 && lead != "0"
	}
	switch {
	case comma >= 0 && dot >= 0:
		decimal, group := ",", "."
		if dot > comma {
			decimal, group = ".", ","
		}
		if strings.Count(n, decimal) > 1 {
			return 0, "", false
		}
		n = strings.ReplaceAll(n, group, "")
		n = strings.Replace(n, ",", ".", 1)
	case comma >= 0:
		if strings.Count(n, ",") > 1 || thousands(',') {
			n = strings.ReplaceAll(n, ",", "")
		} else {
			n = strings.Replace(n, ",", ".", 1)
		}
	case dot >= 0:
		if strings.Count(n, ".") > 1 || thousands('.') {
			n = strings.ReplaceAll(n, ".", "")
		}
	}
	if !plainNumberRE.MatchString(n) {
		return 0, "", false
	}
	v, err := strconv.ParseFloat(n, 64)
	if err != nil {
		return 0, "", false
	}
	if isCode(sign) {
		sign = strings.ToUpper(sign)
	}
	return v, sign, true
}

var plainNumberRE = regexp.MustCompile(`^-?[0-9]*\.?[0-9]+$|^-?[0-9]+\.$`)

// signs are the currency signs an amount may carry, and their currency;
// "$" is read by SignCurrency, as several currencies write it.
var signs = map[string]string{
	"$": "", "US$": "USD", "U$S": "USD", "C$": "CAD", "CA$": "CAD", "A$": "AUD", "AU$": "AUD", "NZ$": "NZD", "S$": "SGD",
	"HK$": "HKD", "MX$": "MXN", "R$": "BRL", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR", "₩": "KRW", "₽": "RUB",
	"₺": "TRY", "₪": "ILS", "₫": "VND", "₱": "PHP", "฿": "THB", "zł": "PLN", "Kč": "CZK", "₴": "UAH", "₦": "NGN",
}

func knownSign(s string) bool {
	_, ok := signs[s]
	return ok || isCode(s)
}

func isCode(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) || r > unicode.MaxASCII {
			return false
		}
	}
	return country.ValidCurrency(strings.ToUpper(s))
}

// dollarCurrencies are the currencies whose amounts are written with a
// bare "$".
var dollarCurrencies = map[string]bool{
	"USD": true, "CAD": true, "AUD": true, "NZD": true, "SGD": true, "HKD": true, "TWD": true, "MXN": true, "ARS": true,
	"CLP": true, "COP": true, "UYU": true, "BSD": true, "BBD": true, "BZD": true, "BMD": true, "BND": true, "FJD": true,
	"GYD": true, "JMD": true, "KYD": true, "LRD": true, "NAD": true, "SBD": true, "SRD": true, "TTD": true, "XCD": true,
}

// SignCurrency is the ISO code of an amount's sign (ParseAmount), "" for
// none: a bare "$" is the account's currency (accountCurrency) when that
// is written with "$" (USD, CAD, AUD, MXN, ...), else USD.
func SignCurrency(sign, accountCurrency string) string {
	if sign == "$" {
		if dollarCurrencies[strings.ToUpper(accountCurrency)] {
			return strings.ToUpper(accountCurrency)
		}
		return "USD"
	}
	if c, ok := signs[sign]; ok {
		return c
	}
	return strings.ToUpper(sign)
}
