// Package lines groups work that arrives at the same time (group commit):
// each key, an account, has a line of waiting jobs and, while the line is
// not empty, writer goroutines that take up to Max of them at a time and
// write them together. Different keys write side by side.
//
// A key has one writer unless Writers says more. Then its batches run side
// by side only when they share no job key (Keys: an external id, an email,
// a phone): a job that shares one with a batch being written waits for it,
// and so does every later job that shares one with a waiting job, so jobs
// with a key in common are written in the order they came, one batch after
// the other, and each finds what the earlier ones wrote.
package lines

import "sync"

// Lines keeps a line of waiting jobs per key. The zero value is not
// usable: set Max and Write.
type Lines[J any] struct {
	// Max bounds how many jobs one Write takes.
	Max int
	// Writers bounds how many batches of one key are written at once; 0
	// is 1. With more than one, Keys must be set.
	Writers int
	// Keys are a job's keys: two jobs that share one are never in batches
	// written at the same time. "" is no key.
	Keys func(J) []string
	// Write writes a batch of a key's jobs, in the order they were added,
	// and answers each; it runs on one of the key's writer goroutines.
	Write func(key int64, batch []J)

	mu    sync.Mutex
	lines map[int64]*line[J] // present while one of the key's writers runs
}

// line is a key's waiting jobs, its running writers and the job keys of
// the batches they write.
type line[J any] struct {
	jobs    []J
	writers int
	held    map[string]int
}

// Add puts j in its key's line, starting a writer for the key when it has
// fewer than Writers. It does not wait for j to be written.
func (l *Lines[J]) Add(key int64, j J) {
	l.mu.Lock()
	if l.lines == nil {
		l.lines = map[int64]*line[J]{}
	}
	ln := l.lines[key]
	if ln == nil {
		ln = &line[J]{held: map[string]int{}}
		l.lines[key] = ln
	}
	ln.jobs = append(ln.jobs, j)
	start := ln.writers < max(l.Writers, 1)
	if start {
		ln.writers++
	}
	l.mu.Unlock()
	if start {
		go l.write(key, ln)
	}
}

// write is one of a key's writers: it writes up to Max of the key's
// waiting jobs at a time, until none it may take waits. A job it leaves
// waits for a batch being written, whose writer takes it next.
func (l *Lines[J]) write(key int64, ln *line[J]) {
	for {
		l.mu.Lock()
		batch := l.take(ln)
		if len(batch) == 0 {
			ln.writers--
			if ln.writers == 0 {
				delete(l.lines, key)
			}
			l.mu.Unlock()
			return
		}
		l.hold(ln, batch, 1)
		l.mu.Unlock()
		l.Write(key, batch)
		l.mu.Lock()
		l.hold(ln, batch, -1)
		l.mu.Unlock()
	}
}

// take removes from ln the next batch a writer may write: up to Max jobs,
// in order, leaving those that share a key with a batch being written or
// with a job left before them.
func (l *Lines[J]) take(ln *line[J]) []J {
	n := max(l.Max, 1)
	if l.Writers <= 1 || l.Keys == nil {
		n = min(n, len(ln.jobs))
		batch := ln.jobs[:n:n]
		ln.jobs = ln.jobs[n:]
		return batch
	}
	var batch, left []J
	var waiting map[string]bool
	for i, j := range ln.jobs {
		if len(batch) == n {
			left = append(left, ln.jobs[i:]...)
			break
		}
		keys := l.Keys(j)
		free := true
		for _, k := range keys {
			if k != "" && (ln.held[k] > 0 || waiting[k]) {
				free = false
			}
		}
		if free {
			batch = append(batch, j)
			continue
		}
		left = append(left, j)
		if waiting == nil {
			waiting = map[string]bool{}
		}
		for _, k := range keys {
			if k != "" {
				waiting[k] = true
			}
		}
	}
	ln.jobs = left
	return batch
}

// hold counts batch's job keys as written (d 1) or done (d -1).
func (l *Lines[J]) hold(ln *line[J], batch []J, d int) {
	if l.Writers <= 1 || l.Keys == nil {
		return
	}
	for _, j := range batch {
		for _, k := range l.Keys(j) {
			if k == "" {
				continue
			}
			if ln.held[k] += d; ln.held[k] == 0 {
				delete(ln.held, k)
			}
		}
	}
}
