package config

import (
	"strings"
	"testing"
)

func TestPublicURL(t *testing.T) {
	t.Parallel()
	good := []struct{ in, want string }{
		{"", ""},
		{"  ", ""},
		{"https://leads.example.com", "https://leads.example.com"},
		{" https://leads.example.com/ ", "https://leads.example.com"},
		{"HTTPS://Leads.Example.COM", "https://leads.example.com"},
		{"http://10.0.0.5:8080", "http://10.0.0.5:8080"},
		{"https://[2001:db8::1]:8443/", "https://[2001:db8::1]:8443"},
		{"https://xn--bcher-kva.example", "https://xn--bcher-kva.example"},
	}
	for _, tt := range good {
		if got, err := PublicURL(tt.in); err != nil || got != tt.want {
			t.Errorf("PublicURL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	bad := []struct{ name, in, says string }{
		{"no scheme", "leads.example.com", "https://"},
		{"javascript", "javascript:alert(1)", "starts with https://"},
		{"javascript with slashes", "javascript://leads.example.com/%0aalert(1)", "starts with https://"},
		{"data", "data:text/html,hi", "starts with https://"},
		{"ftp", "ftp://leads.example.com", "starts with https://"},
		{"opaque", "https:leads.example.com", "whole address"},
		{"no host", "https://", "host"},
		{"credentials", "https://ada:secret@leads.example.com", "user name or password"},
		{"user only", "https://ada@leads.example.com", "user name or password"},
		{"path", "https://leads.example.com/leadsignal", "without a path"},
		{"hook path", "https://leads.example.com/hooks/hubspot/x", "without a path"},
		{"query", "https://leads.example.com/?a=1", "query"},
		{"empty query", "https://leads.example.com?", "query"},
		{"fragment", "https://leads.example.com/#top", "fragment"},
		{"empty fragment", "https://leads.example.com#", "fragment"},
		{"space", "https://leads example.com", "without spaces"},
		{"NUL", "https://leads.example.com\x00", "without spaces"},
		{"newline", "https://leads.example.com\n/x", "without spaces"},
		{"unicode host", "https://bücher.example", "ASCII"},
		{"right-to-left mark", "https://leads.example.com\u200f", "ASCII"},
		{"underscore host", "https://leads_x.example.com", "domain"},
		{"hyphen edge", "https://-leads.example.com", "domain"},
		{"empty label", "https://leads..example.com", "domain"},
		{"empty port", "https://leads.example.com:", "port"},
		{"port zero", "https://leads.example.com:0", "port"},
		{"port too big", "https://leads.example.com:70000", "port"},
		{"too long", "https://" + strings.Repeat("a", 300) + ".com", "too long"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PublicURL(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("PublicURL(%q) = %q, %v; want an error saying %q", tt.in, got, err, tt.says)
			}
		})
	}
}
