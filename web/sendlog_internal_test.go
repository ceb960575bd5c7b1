package web

import "testing"

func TestReadableJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"ampersand", `{"u":"https://a.example/?x=1\u0026y=2"}`, "{\n  \"u\": \"https://a.example/?x=1&y=2\"\n}"},
		{"angle brackets and separators", `["\u003cb\u003e","\u2028\u2029"]`, "[\n  \"<b>\",\n  \"\u2028\u2029\"\n]"},
		{"an escaped backslash before u0026 stays", `["\\u0026"]`, "[\n  \"\\\\u0026\"\n]"},
		{"other escapes stay", `["\u00e9\n\""]`, "[\n  \"\\u00e9\\n\\\"\"\n]"},
		{"not JSON is shown as it is", `oops \u0026`, `oops \u0026`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := readableJSON([]byte(tt.in)); got != tt.want {
				t.Errorf("readableJSON(%q) = %q; want %q", tt.in, got, tt.want)
			}
		})
	}
}
