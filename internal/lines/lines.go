// Package lines groups work that arrives at the same time (group commit):
// each key, an account, has a line of waiting jobs and, while the line is
// not empty, writer goroutines that take up to Max of them at a time and
// write them together. Different keys write side by side; a key's batches
// are written one at a time, or, with Writers and Marks, several at once
// when their jobs have nothing in common.
package lines

import (
	"sync"
	"time"
)

// Lines keeps a line of waiting jobs per key. The zero value is not
// usable: set Max and Write.
type Lines[J any] struct {
	// Max bounds how many jobs one Write takes.
	Max int
	// Writers bounds how many batches of one key are written at once (one
	// when 0). A batch's commit waits on the disk; meanwhile another batch
	// of the key can be read, decided and sent.
	Writers int
	// Side is how many jobs a key's line must have waiting, while one of
	// its batches is written, for another writer to take them as a batch
	// of their own: smaller batches would cost more per job than waiting
	// does.
	Side int
	// Marks names what a job must not share with a job of another batch
	// written at the same time (a lead's external id, its email's hash):
	// a job waits while an earlier job with one of its marks is written or
	// waits. Jobs of one batch may share marks; Write handles them in
	// order. Without Marks, Writers is taken as one.
	Marks func(J) []string
	// Write writes a batch of a key's jobs, in the order they were added,
	// and answers each; it runs on one of the key's writer goroutines. It
	// returns how long the key should rest before its next batch (0 for
	// not at all): the writer waits that long, and until restSingle times
	// as long has passed the key has one batch written at a time.
	Write func(key int64, batch []J) (rest time.Duration)

	mu    sync.Mutex
	lines map[int64]*line[J] // present while the key has a writer
}

// restSingle is how many times as long as it rests a key is then written
// one batch at a time: long enough that a key whose every batch asks for
// a rest (its rules costly to match) never has two batches matched at
// once, short enough that one slow batch does not keep a busy key to one
// writer.
const restSingle = 10

// line is one key's waiting jobs and writers.
type line[J any] struct {
	waiting []entry[J]
	// writers is how many goroutines write the key; active how many of
	// them hold a batch (writing it or resting after it).
	writers, active int
	// busy holds the marks of the batches being written.
	busy map[string]bool
	// single: until then, one batch of the key at a time.
	single time.Time
}

// entry is a waiting job with its marks, named once when it is added.
type entry[J any] struct {
	job   J
	marks []string
}

// most is how many batches of a key may be written at once.
func (l *Lines[J]) most() int {
	if l.Marks == nil {
		return 1
	}
	return max(l.Writers, 1)
}

// Add puts j in its key's line and starts a writer for the key when it
// has none, or when it has fewer than Writers, Side jobs wait and the key
// is not resting. It does not wait for j to be written.
func (l *Lines[J]) Add(key int64, j J) {
	e := entry[J]{job: j}
	if l.Marks != nil {
		e.marks = l.Marks(j)
	}
	l.mu.Lock()
	if l.lines == nil {
		l.lines = map[int64]*line[J]{}
	}
	ln := l.lines[key]
	if ln == nil {
		ln = &line[J]{busy: map[string]bool{}}
		l.lines[key] = ln
	}
	ln.waiting = append(ln.waiting, e)
	start := ln.writers == 0 || (ln.writers < l.most() && len(ln.waiting) >= l.Side && time.Now().After(ln.single))
	if start {
		ln.writers++
	}
	l.mu.Unlock()
	if start {
		go l.write(key, ln)
	}
}

// write is one of a key's writers: it takes batches of the key's waiting
// jobs until none can be taken, then leaves. A job held back by another
// writer's batch is taken by that writer once its batch is written.
func (l *Lines[J]) write(key int64, ln *line[J]) {
	for {
		l.mu.Lock()
		batch, marks := l.take(ln)
		if len(batch) == 0 {
			ln.writers--
			if ln.writers == 0 {
				delete(l.lines, key)
			}
			l.mu.Unlock()
			return
		}
		ln.active++
		l.mu.Unlock()

		rest := l.Write(key, batch)

		l.mu.Lock()
		for _, m := range marks {
			delete(ln.busy, m)
		}
		if rest > 0 {
			ln.single = time.Now().Add(restSingle * rest)
		}
		l.mu.Unlock()
		if rest > 0 {
			time.Sleep(rest)
		}
		l.mu.Lock()
		ln.active--
		l.mu.Unlock()
	}
}

// take takes the next batch of ln's waiting jobs, in order, leaving those
// that share a mark with a batch being written or with a job left, and
// returns it with its marks, now busy. It takes none while another writer
// holds a batch of a key that is written one batch at a time. l.mu is held.
func (l *Lines[J]) take(ln *line[J]) (batch []J, marks []string) {
	if ln.active > 0 && (ln.active >= l.most() || time.Now().Before(ln.single)) {
		return nil, nil
	}
	var (
		left []entry[J]
		held map[string]bool // marks of the jobs left
	)
	for i, e := range ln.waiting {
		if len(batch) == max(l.Max, 1) {
			left = append(left, ln.waiting[i:]...)
			break
		}
		if clashes(e.marks, ln.busy) || clashes(e.marks, held) {
			if held == nil {
				held = map[string]bool{}
			}
			for _, m := range e.marks {
				held[m] = true
			}
			left = append(left, e)
			continue
		}
		batch = append(batch, e.job)
		marks = append(marks, e.marks...)
	}
	if ln.active > 0 && len(batch) < l.Side {
		return nil, nil
	}
	for _, m := range marks {
		ln.busy[m] = true
	}
	ln.waiting = left
	return batch, marks
}

func clashes(marks []string, set map[string]bool) bool {
	for _, m := range marks {
		if set[m] {
			return true
		}
	}
	return false
}
