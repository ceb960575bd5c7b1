// Package lines groups work that arrives at the same time (group commit):
// each key, an account, has a line of waiting jobs and, while the line is
// not empty, one writer goroutine that takes up to Max of them at a time
// and writes them together. A key's batches never race each other;
// different keys write side by side.
package lines

import "sync"

// Lines keeps a line of waiting jobs per key. The zero value is not
// usable: set Max and Write.
type Lines[J any] struct {
	// Max bounds how many jobs one Write takes.
	Max int
	// Write writes a batch of a key's jobs, in the order they were added,
	// and answers each; it runs on the key's writer goroutine.
	Write func(key int64, batch []J)

	mu    sync.Mutex
	lines map[int64][]J // present while the key's writer runs
}

// Add puts j in its key's line, starting the key's writer when it has
// none. It does not wait for j to be written.
func (l *Lines[J]) Add(key int64, j J) {
	l.mu.Lock()
	if l.lines == nil {
		l.lines = map[int64][]J{}
	}
	line, running := l.lines[key]
	l.lines[key] = append(line, j)
	l.mu.Unlock()
	if !running {
		go l.write(key)
	}
}

// write is a key's writer: it writes up to Max of the key's waiting jobs
// at a time, until none waits.
func (l *Lines[J]) write(key int64) {
	for {
		l.mu.Lock()
		line := l.lines[key]
		if len(line) == 0 {
			delete(l.lines, key)
			l.mu.Unlock()
			return
		}
		n := min(len(line), max(l.Max, 1))
		batch := line[:n:n]
		l.lines[key] = line[n:]
		l.mu.Unlock()
		l.Write(key, batch)
	}
}
