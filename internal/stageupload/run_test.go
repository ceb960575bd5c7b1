package stageupload

import (
	"context"
	"testing"
	"time"
)

// A pass started while the upload's goroutine still works the one before
// (new columns during a preview) runs as soon as that goroutine ends: not a
// minute later, when Run would look again, nor never without Run.
func TestRunnerRunsAgainForANewPass(t *testing.T) {
	t.Parallel()
	u := New(Options{})
	calls := make(chan int64, 4)
	release := make(chan struct{})
	run := func(_ context.Context, id int64) {
		calls <- id
		<-release
	}
	u.start(7, run)
	if got := <-calls; got != 7 {
		t.Fatalf("first run of %d; want 7", got)
	}
	u.start(7, run) // while the first still runs
	u.start(7, run) // twice asks once more, not twice
	release <- struct{}{}
	select {
	case got := <-calls:
		if got != 7 {
			t.Fatalf("second run of %d; want 7", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the new pass did not run after the old one ended")
	}
	close(release)
	u.wg.Wait()
	if len(calls) != 0 {
		t.Errorf("%d more runs; want none", len(calls))
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.running)+len(u.again) != 0 {
		t.Errorf("running %v, again %v; want none once done", u.running, u.again)
	}
}
