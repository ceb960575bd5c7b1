package destination

import (
	"encoding/json"
	"strings"
)

// CustomFields reads a lead's custom fields (models.Lead.Fields, a JSON
// object of strings), trimmed; a value that is no string is left out. The
// platforms' click ids are kept there under their URL parameters' names
// (gclid, gbraid, wbraid, ttclid, ttp, epik, li_fat_id: docs/api.md).
func CustomFields(s string) map[string]string {
	m := map[string]string{}
	if s == "" {
		return m
	}
	var raw map[string]any
	if json.Unmarshal([]byte(s), &raw) != nil {
		return m
	}
	for k, v := range raw {
		if str, ok := v.(string); ok {
			m[k] = strings.TrimSpace(str)
		}
	}
	return m
}
