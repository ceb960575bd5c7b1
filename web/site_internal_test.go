package web

import "testing"

// A test lead's email is of the site's own domain, or example.com where
// the origin has none: an address, a name without a dot.
func TestTestLeadDomain(t *testing.T) {
	for origin, want := range map[string]string{
		"https://www.northwind.example":       "northwind.example",
		"https://shop.northwind.example:8443": "shop.northwind.example",
		"http://localhost:3000":               "example.com",
		"http://192.168.1.5:8080":             "example.com",
		"http://[::1]:8080":                   "example.com",
		"http://[2001:db8::1]":                "example.com",
		"https://intranet":                    "example.com",
	} {
		if got := testLeadDomain(origin); got != want {
			t.Errorf("testLeadDomain(%q) = %q; want %q", origin, got, want)
		}
	}
}
