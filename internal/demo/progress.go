package demo

import (
	"fmt"
	"io"
	"strings"
)

// barWidth is the number of cells of a Bar.
const barWidth = 30

// Bar shows Seed's progress on w: on a terminal one line redrawn in place,
// "seeding demo leads [#####.........] 412/780"; elsewhere (a log file, a
// pipe) a plain line at every tenth.
type Bar struct {
	w    io.Writer
	tty  bool
	last int // cells (terminal) or tenths (elsewhere) last shown; -1 for none
}

// NewBar returns a Bar writing to w, redrawing in place when tty.
func NewBar(w io.Writer, tty bool) *Bar { return &Bar{w: w, tty: tty, last: -1} }

// Update shows done of total; Seed's Options.Progress.
func (b *Bar) Update(done, total int) {
	if total <= 0 {
		return
	}
	if !b.tty {
		tenth := done * 10 / total
		if tenth != b.last {
			b.last = tenth
			fmt.Fprintf(b.w, "seeding demo leads %d/%d\n", done, total)
		}
		return
	}
	cells := done * barWidth / total
	// Redraw when a cell fills, and every few leads for the count.
	if cells == b.last && done%10 != 0 && done != total {
		return
	}
	b.last = cells
	fmt.Fprintf(b.w, "\rseeding demo leads [%s%s] %d/%d", strings.Repeat("#", cells), strings.Repeat(".", barWidth-cells), done, total)
	if done == total {
		fmt.Fprintln(b.w)
	}
}
