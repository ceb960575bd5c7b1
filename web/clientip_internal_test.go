package web

import (
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
)

// With LEADSIGNAL_CLIENT_IP_HEADER the visitor's address is read from that
// header alone, X-Forwarded-For ignored; without a usable address there,
// the direct peer's. Unset, X-Forwarded-For counts from private peers only.
func TestClientIP(t *testing.T) {
	cases := []struct {
		extract       echo.IPExtractor
		peer, cf, xff string
		want          string
	}{
		{clientIPFrom("CF-Connecting-IP"), "203.0.113.1:443", "198.51.100.7", "192.0.2.9", "198.51.100.7"},
		{clientIPFrom("CF-Connecting-IP"), "203.0.113.1:443", "::ffff:198.51.100.8", "", "198.51.100.8"},
		{clientIPFrom("CF-Connecting-IP"), "203.0.113.1:443", "", "192.0.2.9", "203.0.113.1"},
		{clientIPFrom("CF-Connecting-IP"), "203.0.113.1:443", "not an address", "", "203.0.113.1"},
		{echo.ExtractIPFromXFFHeader(), "203.0.113.1:443", "", "192.0.2.9", "203.0.113.1"},
		{echo.ExtractIPFromXFFHeader(), "10.0.0.2:443", "", "192.0.2.9", "192.0.2.9"},
	}
	for _, c := range cases {
		r := httptest.NewRequest("POST", "/api/v1/collect", nil)
		r.RemoteAddr = c.peer
		if c.cf != "" {
			r.Header.Set("CF-Connecting-IP", c.cf)
		}
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := c.extract(r); got != c.want {
			t.Errorf("peer %s, CF %q, XFF %q: %s; want %s", c.peer, c.cf, c.xff, got, c.want)
		}
	}
}
