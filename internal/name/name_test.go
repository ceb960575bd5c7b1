package name

import (
	"strings"
	"testing"
)

func TestProblem(t *testing.T) {
	tests := []struct {
		name, in string
		bad      bool
	}{
		{"plain", "Qualified leads", false},
		{"accents and emoji", "Leads à Paris 👩‍💻", false},
		{"persian joiner", "می\u200cخواهم", false},
		{"empty", "", true},
		{"too long", strings.Repeat("a", MaxLen+1), true},
		{"exactly the limit", strings.Repeat("é", MaxLen), false},
		{"invalid utf-8", "bad\xff", true},
		{"right-to-left override", "gpj\u202eexe", true},
		{"zero-width space", "a\u200bb", true},
		{"byte-order mark", "\ufeffname", true},
		{"nul", "a\x00b", true},
		{"tab", "a\tb", true},
		{"tag character", "a\U000E0041", true},
		{"leading space", " a", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Problem(tt.in); (got != "") != tt.bad {
				t.Errorf("Problem(%q) = %q; want a problem: %v", tt.in, got, tt.bad)
			}
		})
	}
}

func TestStageProblem(t *testing.T) {
	for _, tt := range []struct {
		in  string
		bad bool
	}{
		{"won", false}, {"Closed Won", false}, {"", true}, {"junk", true}, {"Not_Junk", true}, {"won\u202e", true},
	} {
		if got := StageProblem(tt.in); (got != "") != tt.bad {
			t.Errorf("StageProblem(%q) = %q; want a problem: %v", tt.in, got, tt.bad)
		}
	}
}

// Cut keeps whole characters, counted as characters, and marks a cut.
func TestCut(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"ünïcödé", 3, "ünï…"},
		{"", 0, ""},
	} {
		if got := Cut(tt.s, tt.n); got != tt.want {
			t.Errorf("Cut(%q, %d) = %q; want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
