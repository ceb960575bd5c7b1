package web

import "testing"

// A hook URL's token never reaches the log whole: the access, error and
// panic logs cut it to 6 characters.
func TestLogPath(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"/hooks/hubspot/svbwq3jiffdcpjhgxzdtzc66r7agv3hbwtfb7qu3rxh63lsdrqr2", "/hooks/hubspot/svbwq3…"},
		{"/hooks/generic/abc", "/hooks/generic/abc"},
		{"/hooks/pipedrive", "/hooks/pipedrive"},
		{"/accounts/1/leads", "/accounts/1/leads"},
	}
	for _, tt := range tests {
		if got := logPath(tt.in); got != tt.want {
			t.Errorf("logPath(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
