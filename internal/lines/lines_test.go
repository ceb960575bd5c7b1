package lines

import (
	"errors"
	"fmt"
	"slices"
	"strings"
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
	l := &Lines[int]{Max: 3, Write: func(key int64, batch []int) time.Duration {
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
		return 0
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

// recorder is a Write that records each batch and can hold the batch that
// starts with a given job until released.
type recorder struct {
	mu      sync.Mutex
	batches [][]string
	writing int // batches being written now
	most    int // most batches written at once
	holds   map[string]chan struct{}
	held    chan string
	rest    time.Duration
	// rests, when set, is the rest after the batch starting with a job
	// (rest is not used then); ended when each batch ended.
	rests map[string]time.Duration
	ended map[string]time.Time
	began map[string]time.Time
}

func newRecorder(holding ...string) *recorder {
	r := &recorder{holds: map[string]chan struct{}{}, held: make(chan string, 10),
		began: map[string]time.Time{}, ended: map[string]time.Time{}}
	for _, j := range holding {
		r.holds[j] = make(chan struct{})
	}
	return r
}

func (r *recorder) write(_ int64, batch []string) time.Duration {
	r.mu.Lock()
	r.began[batch[0]] = time.Now()
	r.writing++
	r.most = max(r.most, r.writing)
	hold := r.holds[batch[0]]
	r.mu.Unlock()
	if hold != nil {
		r.held <- batch[0]
		<-hold
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writing--
	r.batches = append(r.batches, slices.Clone(batch))
	r.ended[batch[0]] = time.Now()
	if r.rests != nil {
		return r.rests[batch[0]]
	}
	return r.rest
}

// nextHeld waits for a held batch to start and returns its first job.
func (r *recorder) nextHeld(t *testing.T) string {
	t.Helper()
	select {
	case j := <-r.held:
		return j
	case <-time.After(5 * time.Second):
		t.Fatalf("no batch held in 5s; batches written: %v", r.written())
		return ""
	}
}

func (r *recorder) written() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.batches)
}

// waitFor polls until the recorded batches are want.
func (r *recorder) waitFor(t *testing.T, want ...[]string) {
	t.Helper()
	poll.Until(t, 5*time.Second, func() error {
		if got := r.written(); !slices.EqualFunc(got, want, slices.Equal) {
			return fmt.Errorf("batches = %v; want %v", got, want)
		}
		return nil
	})
}

// A job's marks are the letters of its name after the dash: "b-xy" has the
// marks "x" and "y".
func letters(j string) []string {
	_, after, _ := strings.Cut(j, "-")
	return strings.Split(after, "")
}

// While a key's batch is written, another writer takes the jobs waiting
// behind it once there are Side of them, as a batch of its own.
func TestLinesWriteSideBySide(t *testing.T) {
	r := newRecorder("a-a")
	l := &Lines[string]{Max: 10, Writers: 2, Side: 2, Marks: letters, Write: r.write}
	l.Add(1, "a-a")
	r.nextHeld(t)
	l.Add(1, "b-b")
	l.mu.Lock()
	writers := l.lines[1].writers
	l.mu.Unlock()
	if writers != 1 {
		t.Fatalf("writers with one job waiting = %d; want 1 (Side is 2)", writers)
	}
	l.Add(1, "c-c")
	r.waitFor(t, []string{"b-b", "c-c"})
	close(r.holds["a-a"])
	r.waitFor(t, []string{"b-b", "c-c"}, []string{"a-a"})
	if r.most != 2 {
		t.Errorf("most batches at once = %d; want 2", r.most)
	}
}

// A job that shares a mark with a batch being written, or with a job
// waiting before it, waits for them; jobs with other marks go ahead.
func TestLinesMarksKeepOrder(t *testing.T) {
	r := newRecorder("a-a")
	l := &Lines[string]{Max: 10, Writers: 2, Side: 1, Marks: letters, Write: r.write}
	l.Add(1, "a-a")
	r.nextHeld(t)
	r.holds["c-c"] = make(chan struct{})
	l.Add(1, "b-ab") // shares "a" with the batch being written
	l.Add(1, "c-c")
	if got := r.nextHeld(t); got != "c-c" {
		t.Fatalf("held %q; want c-c, written beside a-a", got)
	}
	l.Add(1, "d-b")  // shares "b" with b-ab, which waits
	l.Add(1, "e-e")  // nothing in common: may go with the next batch
	l.Add(1, "f-cf") // shares "c" with c-c, being written
	close(r.holds["c-c"])
	// c-c's writer takes what no batch being written holds back: not b-ab
	// (a-a's "a"), nor d-b behind it.
	r.waitFor(t, []string{"c-c"}, []string{"e-e", "f-cf"})
	close(r.holds["a-a"])
	r.waitFor(t, []string{"c-c"}, []string{"e-e", "f-cf"}, []string{"a-a"}, []string{"b-ab", "d-b"})
}

// A batch that asks for a rest holds its key to one batch at a time: its
// writer waits that long before the key's next batch, and no other writer
// takes one meanwhile.
func TestLinesRestOneBatchAtATime(t *testing.T) {
	r := newRecorder()
	r.rest = 50 * time.Millisecond
	l := &Lines[string]{Max: 1, Writers: 3, Side: 1, Marks: letters, Write: r.write}
	l.Add(1, "a-a")
	r.waitFor(t, []string{"a-a"})
	start := time.Now() // a-a's writer now rests
	for _, j := range []string{"b-b", "c-c", "d-d"} {
		l.Add(1, j)
	}
	r.waitFor(t, []string{"a-a"}, []string{"b-b"}, []string{"c-c"}, []string{"d-d"})
	if r.most != 1 {
		t.Errorf("most batches at once = %d; want 1 while the key rests", r.most)
	}
	if spent := time.Since(start); spent < 3*r.rest {
		t.Errorf("three batches after resting %v each took %v; want at least %v", r.rest, spent, 3*r.rest)
	}
}

// A writer that was already writing when another batch of its key asked
// for a rest waits for that rest to end before it takes the next batch.
func TestLinesRestHoldsTheOtherWriters(t *testing.T) {
	r := newRecorder("a-a", "b-b")
	r.rests = map[string]time.Duration{"b-b": 50 * time.Millisecond}
	l := &Lines[string]{Max: 1, Writers: 2, Side: 1, Marks: letters, Write: r.write}
	l.Add(1, "a-a")
	r.nextHeld(t)
	l.Add(1, "b-b")
	r.nextHeld(t)
	l.Add(1, "c-c")
	close(r.holds["b-b"])
	r.waitFor(t, []string{"b-b"})
	close(r.holds["a-a"]) // a-a's writer takes c-c once b-b's rest is over
	r.waitFor(t, []string{"b-b"}, []string{"a-a"}, []string{"c-c"})
	r.mu.Lock()
	defer r.mu.Unlock()
	if gap := r.began["c-c"].Sub(r.ended["b-b"]); gap < r.rests["b-b"] {
		t.Errorf("c-c began %v after b-b asked for a rest of %v", gap, r.rests["b-b"])
	}
}
