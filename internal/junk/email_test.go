package junk

import (
	"strings"
	"testing"
)

func TestBadEmail(t *testing.T) {
	tests := []struct {
		email string
		want  string // "" when the syntax is fine
	}{
		{"", ""},
		{"jane.doe@example.com", ""},
		{"j+tag@gmail.com", ""},
		{"o'brien@example.co.uk", ""},
		{"maria_silva@empresa.com.br", ""},
		{"first.last@sub.domain.example.museum", ""},
		{"1234@123.com", ""},
		{"info@xn--mnchen-3ya.de", ""},
		{"info@example.xn--p1ai", ""},
		{"kontakt@münchen.de", ""},
		{"ayşe@örnek.com.tr", ""},
		{"jane@gmial.com", ""},
		{"Jane@Example.COM", ""},
		{"x@a-b.co", ""},
		{strings.Repeat("a", 64) + "@example.com", ""},

		{"jane", `email "jane" has no @`},
		{"jane.example.com", `email "jane.example.com" has no @`},
		{"jane@@example.com", `email "jane@@example.com" has more than one @`},
		{"a@b@example.com", `email "a@b@example.com" has more than one @`},
		{"@example.com", `email "@example.com" has nothing before the @`},
		{"jane@", `email "jane@" has nothing after the @`},
		{"jane@example", `email "jane@example" has no dot in its domain`},
		{"jane doe@example.com", `email "jane doe@example.com" contains a space`},
		{"jane@exam ple.com", `email "jane@exam ple.com" contains a space`},
		{"jane..doe@example.com", `email "jane..doe@example.com" has two dots in a row`},
		{"jane@example..com", `email "jane@example..com" has two dots in a row`},
		{".jane@example.com", `email ".jane@example.com" has a dot at the start or end of the part before the @`},
		{"jane.@example.com", `email "jane.@example.com" has a dot at the start or end of the part before the @`},
		{"ja<ne>@example.com", `email "ja<ne>@example.com" has a character that is not allowed before the @`},
		{"jane@-example.com", `email "jane@-example.com" has a domain part "-example" that starts or ends with a hyphen`},
		{"jane@example-.com", `email "jane@example-.com" has a domain part "example-" that starts or ends with a hyphen`},
		{"jane@exa_mple.com", `email "jane@exa_mple.com" has a character '_' that is not allowed in its domain`},
		{"jane@.example.com", `email "jane@.example.com" has an empty part in its domain`},
		{"jane@example.com.", `email "jane@example.com." has an empty part in its domain`},
		{"jane@[192.168.0.1]", `email "jane@[192.168.0.1]" has a character '[' that is not allowed in its domain`},
		{"jane@example.c", `email "jane@example.c" has no valid top-level domain ("c")`},
		{"jane@example.c0m", `email "jane@example.c0m" has no valid top-level domain ("c0m")`},
		{"jane@192.168.0.1", `email "jane@192.168.0.1" has no valid top-level domain ("1")`},
		{strings.Repeat("a", 65) + "@example.com", `email "` + strings.Repeat("a", 65) + `@example.com" has more than 64 characters before the @`},
		{"jane@" + strings.Repeat("a", 64) + ".com", `email "jane@` + strings.Repeat("a", 64) + `.com" has a domain part longer than 63 characters`},
	}
	for _, tt := range tests {
		t.Run(tt.email, func(t *testing.T) {
			if got := only(t, BadEmail, Setting{}, Input{Email: tt.email}); got != tt.want {
				t.Errorf("badEmail(%q) = %q; want %q", tt.email, got, tt.want)
			}
		})
	}
}

func TestDisposableEmail(t *testing.T) {
	tests := []struct {
		email string
		want  string // "" when not disposable
	}{
		{"", ""},
		{"x@mailinator.com", `email domain "mailinator.com" is a disposable mailbox provider`},
		{"X@MAILINATOR.COM", `email domain "mailinator.com" is a disposable mailbox provider`},
		{"x@yopmail.com", `email domain "yopmail.com" is a disposable mailbox provider`},
		{"x@guerrillamail.com", `email domain "guerrillamail.com" is a disposable mailbox provider`},
		{"x@10minutemail.com", `email domain "10minutemail.com" is a disposable mailbox provider`},
		{"x@foo.mailinator.com", `email domain "foo.mailinator.com" is under the disposable mailbox provider "mailinator.com"`},
		{"me@alias.33mail.com", `email domain "alias.33mail.com" is under the disposable mailbox provider "33mail.com"`},
		{"x@mailinator.com.", `email domain "mailinator.com" is a disposable mailbox provider`},
		{"x@@mailinator.com", `email domain "mailinator.com" is a disposable mailbox provider`},
		{"jane@gmail.com", ""},
		{"jane@outlook.com", ""},
		{"jane@yahoo.com", ""},
		{"jane@icloud.com", ""},
		{"jane@gmx.de", ""},
		{"jane@web.de", ""},
		{"jane@orange.fr", ""},
		{"jane@uol.com.br", ""},
		{"jane@proton.me", ""},
		{"student@pw.edu.pl", ""},
		{"info@firma.web.id", ""},
		{"x@mailinator.com.example.org", ""},
		{"x@mailinatorx.org", ""},
		{"mailinator.com", ""},
		{"x@com", ""},
	}
	for _, tt := range tests {
		t.Run(tt.email, func(t *testing.T) {
			if got := only(t, DisposableEmail, Setting{}, Input{Email: tt.email}); got != tt.want {
				t.Errorf("disposableEmail(%q) = %q; want %q", tt.email, got, tt.want)
			}
		})
	}
}

func TestDisposableList(t *testing.T) {
	header, _, _ := strings.Cut(disposableList, "\n")
	if !strings.HasPrefix(header, "# disposable-email-domains ") {
		t.Errorf("disposable_domains.txt header = %q; want the package name and version", header)
	}
	set := disposableDomains()
	if len(set) < 100000 {
		t.Errorf("disposable domains = %d; want the full list", len(set))
	}
	var prev string
	for line := range strings.Lines(disposableList) {
		line = strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(line, "#") {
			continue
		}
		if line == "" || line != strings.ToLower(strings.TrimSpace(line)) || !strings.Contains(line, ".") || line <= prev {
			t.Fatalf("disposable_domains.txt line %q after %q: want sorted, unique, lowercase domains", line, prev)
		}
		prev = line
	}
}

func BenchmarkDisposableEmail(b *testing.B) {
	disposableDomains()
	for b.Loop() {
		disposableEmail("someone@mail.sub.example.com")
	}
}
