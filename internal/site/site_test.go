package site

import (
	"strings"
	"testing"
)

func TestParseOrigin(t *testing.T) {
	good := map[string]string{
		"https://www.example.com":                          "https://www.example.com",
		" HTTPS://WWW.Example.com/contact?x ":              "",
		"https://www.example.com/contact":                  "https://www.example.com",
		"https://www.example.com:443":                      "https://www.example.com",
		"http://localhost:8080":                            "http://localhost:8080",
		"http://127.0.0.1:5173/":                           "http://127.0.0.1:5173",
		"http://[::1]:3000":                                "http://[::1]:3000",
		"http://shop.example.com:80/":                      "http://shop.example.com",
		"https://xn--bcher-kva.example":                    "https://xn--bcher-kva.example",
		"https://Example.COM":                              "https://example.com",
		"https://www.example.com#top":                      "",
		"javascript:alert(1)":                              "",
		"https://user:pw@example.com":                      "",
		"ftp://example.com":                                "",
		"www.example.com":                                  "",
		"https://":                                         "",
		"":                                                 "",
		"https://exa mple.com":                             "",
		"https://example.com/\x00":                         "",
		"data:text/html,<script>alert(1)</script>":         "",
		"https://" + strings.Repeat("a", 300) + ".example": "",
	}
	for in, want := range good {
		got, err := ParseOrigin(in)
		if want == "" {
			if err == nil {
				t.Errorf("ParseOrigin(%q) = %q; want an error", in, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("ParseOrigin(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestNewKey(t *testing.T) {
	a, b := NewKey(), NewKey()
	if a == b || !LooksLikeKey(a) || !LooksLikeKey(b) {
		t.Errorf("keys %q %q", a, b)
	}
	for _, bad := range []string{"", "pk_", "lsk_" + a[3:], a + "x", a[:len(a)-1] + "1", a[:len(a)-1] + "A"} {
		if LooksLikeKey(bad) {
			t.Errorf("LooksLikeKey(%q) = true", bad)
		}
	}
}
