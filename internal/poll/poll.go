// Package poll lets a test wait for what another goroutine, process or
// browser does, when nothing signals it: Until asks a condition again and
// again, a few milliseconds apart, until it holds, and fails the test when
// it has not held by a deadline. A test never sleeps a fixed time and hopes
// the work is done by then.
package poll

import (
	"testing"
	"time"
)

// Until calls check until it returns nil, and fails the test with its last
// error when it has not within timeout. check runs on the test's goroutine,
// so it may end the test itself (t.Fatal) on an error not worth waiting
// out. Calls start 1 ms apart and back off to 50 ms.
func Until(t testing.TB, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v in vain: %v", timeout, err)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}
