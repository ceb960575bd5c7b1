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

// With several writers a key's batches run side by side, but never two
// that share a job key: a job sharing one with a batch being written, and
// every later job sharing one with it, waits, and they are written in the
// order they came.
func TestLinesWritersShareNoKey(t *testing.T) {
	type job struct {
		id   int
		keys []string
	}
	started, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	written := map[int]chan struct{}{}
	l := &Lines[job]{Max: 10, Writers: 3, Keys: func(j job) []string { return j.keys },
		Write: func(key int64, batch []job) {
			if batch[0].id == 0 {
				close(started)
				<-release // the first batch holds "a@x" while the rest come
			}
			mu.Lock()
			for _, j := range batch {
				order = append(order, j.id)
				if c := written[j.id]; c != nil {
					close(c)
				}
			}
			mu.Unlock()
			for range batch {
				wg.Done()
			}
		}}
	wg.Add(5)
	l.Add(1, job{0, []string{"a@x", "555"}})
	<-started
	mu.Lock()
	written[3] = make(chan struct{})
	mu.Unlock()
	l.Add(1, job{1, []string{"a@x", ""}})    // shares a@x with the batch being written: waits
	l.Add(1, job{2, []string{"b@x", "777"}}) // shares nothing: written at once, beside it
	l.Add(1, job{3, []string{"c@x", ""}})    // shares nothing either
	l.Add(1, job{4, []string{"d@x", "a@x"}}) // shares a@x with job 1, which waits: waits behind it
	select {
	case <-written[3]:
	case <-time.After(5 * time.Second):
		t.Fatal("a job that shares no key waited for the batch being written")
	}
	mu.Lock()
	if slices.Contains(order, 1) || slices.Contains(order, 4) {
		t.Errorf("written %v while job 0 held a@x; want jobs 1 and 4 to wait", order)
	}
	mu.Unlock()
	close(release)
	wg.Wait()
	if i1, i4 := slices.Index(order, 1), slices.Index(order, 4); i1 < 0 || i4 < i1 {
		t.Errorf("order %v; want job 1 before job 4", order)
	}
	poll.Until(t, 5*time.Second, func() error {
		l.mu.Lock()
		defer l.mu.Unlock()
		if left := len(l.lines); left != 0 {
			return fmt.Errorf("lines left = %d; want none once written", left)
		}
		return nil
	})
}
