package lines

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/poll"
)

// Jobs added while a key's writer is busy wait in its line and are written
// together, in the order they were added, at most Max at a time; each key
// has its own writer.
func TestLinesGroupJobs(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	batches := map[int64][][]int{}
	var wg sync.WaitGroup
	l := &Lines[int]{Max: 3, Write: func(key int64, batch []int) {
		if batch[0] == 0 {
			close(started)
			<-release // the first write holds the line while the rest queue
		}
		mu.Lock()
		batches[key] = append(batches[key], slices.Clone(batch))
		mu.Unlock()
		for range batch {
			wg.Done()
		}
	}}
	wg.Add(8)
	l.Add(1, 0)
	<-started
	for i := 1; i < 7; i++ {
		l.Add(1, i)
	}
	l.Add(2, 100) // another key is not held up by key 1's writer
	poll.Until(t, 5*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(batches[2]) != 1 {
			return errors.New("key 2 is not written while key 1's writer is held")
		}
		return nil
	})
	close(release)
	wg.Wait()
	want := [][]int{{0}, {1, 2, 3}, {4, 5, 6}}
	if got := batches[1]; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("key 1 batches = %v; want %v", got, want)
	}
	if got := batches[2]; len(got) != 1 || got[0][0] != 100 {
		t.Errorf("key 2 batches = %v; want [[100]]", got)
	}
	// The last job is answered inside Write, before its writer sees the
	// line empty and leaves; give the writers a moment to do so.
	poll.Until(t, 5*time.Second, func() error {
		l.mu.Lock()
		defer l.mu.Unlock()
		if left := len(l.lines); left != 0 {
			return fmt.Errorf("lines left = %d; want none once written", left)
		}
		return nil
	})
}
