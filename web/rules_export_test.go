package web

import (
	"testing"
	"time"
)

// SetPreviewDeadline makes rule previews stop after d, instead of
// previewDeadline, until the test ends.
func SetPreviewDeadline(t testing.TB, d time.Duration) {
	previewDeadlineForTests.Store(int64(d))
	t.Cleanup(func() { previewDeadlineForTests.Store(0) })
}
