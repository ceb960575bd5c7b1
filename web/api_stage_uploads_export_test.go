package web

import (
	"testing"
	"time"
)

// SetUploadWait makes POST /api/v1/stage-uploads wait d for its preview
// for the rest of the test.
func SetUploadWait(t testing.TB, d time.Duration) {
	uploadWaitForTests.Store(int64(d))
	t.Cleanup(func() { uploadWaitForTests.Store(0) })
}
