package views

import "testing"

func TestCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 57: "57", 999: "999", 1000: "1,000", 9876: "9,876", CountCap: "10,000", CountCap + 1: "10,000+"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q; want %q", n, got, want)
		}
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int64]string{0: "0 events", 1: "1 event", 1000: "1,000 events"} {
		if got := plural(n, "event", "events"); got != want {
			t.Errorf("plural(%d) = %q; want %q", n, got, want)
		}
	}
}
