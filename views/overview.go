package views

import (
	"math"
	"net/url"
	"slices"

	"github.com/leadsignal/leadsignal/models"
)

// formatInt writes an exact count with thousands separators: "1,234".
func formatInt(n int64) string { return countUpTo(n, math.MaxInt64) }

func contains(list []string, s string) bool { return slices.Contains(list, s) }

// withParam is u with the query parameter k set to v.
func withParam(u, k, v string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return u
	}
	q := parsed.Query()
	q.Set(k, v)
	parsed.RawQuery = q.Encode()
	return parsed.String()
}

// SourceLabel names a lead source as people say it.
func SourceLabel(s models.Source) string {
	switch s {
	case models.SourceWebsite:
		return "Website"
	case models.SourceInstantForm:
		return "Instant Form"
	case models.SourceCRM:
		return "CRM"
	case models.SourceWhatsApp:
		return "WhatsApp"
	case models.SourcePhone:
		return "Phone"
	}
	return string(s)
}
