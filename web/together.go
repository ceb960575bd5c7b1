package web

import (
	"context"
	"fmt"
	"runtime/debug"

	"golang.org/x/sync/errgroup"
)

// maxReadsAtOnce bounds how many of one page's reads run at once: each
// holds a pooled connection (SQLite's pool has four).
const maxReadsAtOnce = 4

// together runs a page's independent reads side by side, at most
// maxReadsAtOnce at a time, and returns the first error; the others' ctx
// is then cancelled. A read that panics fails the request with the panic
// and its stack, as echo's Recover does for the handler's own goroutine,
// rather than ending the process.
func together(ctx context.Context, reads ...func(ctx context.Context) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(maxReadsAtOnce)
	for _, read := range reads {
		g.Go(func() (err error) {
			defer func() {
				if v := recover(); v != nil {
					err = fmt.Errorf("panic in a page's read: %v\n%s", v, debug.Stack())
				}
			}()
			return read(ctx)
		})
	}
	return g.Wait()
}
