package store

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Large batches of new rows reach Postgres through COPY: the rows go in
// pages of many at a time, without the per-row work of an INSERT's
// executor, and a row costs a few bytes of text instead of array elements
// to decode. copyRows writes COPY's text format (one row a line, columns
// separated by tabs, \N for NULL) by hand, so a COPY is one round trip:
// pgx's CopyFrom first asks the server for the table's column types.

// copyRows is a table's new rows in COPY's text format.
type copyRows struct {
	table   string
	columns []string
	b       bytes.Buffer
	first   bool
	n       int
}

func newCopyRows(table string, columns ...string) *copyRows {
	return &copyRows{table: table, columns: columns, first: true}
}

// row starts a new row.
func (c *copyRows) row() *copyRows {
	if c.n > 0 {
		c.b.WriteByte('\n')
	}
	c.n++
	c.first = true
	return c
}

func (c *copyRows) sep() {
	if !c.first {
		c.b.WriteByte('\t')
	}
	c.first = false
}

// text writes a text value, escaping what COPY's text format reads as
// markup: the backslash, tab, newline and carriage return.
func (c *copyRows) text(s string) *copyRows {
	c.sep()
	if !strings.ContainsAny(s, "\\\t\n\r") {
		c.b.WriteString(s)
		return c
	}
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; ch {
		case '\\':
			c.b.WriteString(`\\`)
		case '\t':
			c.b.WriteString(`\t`)
		case '\n':
			c.b.WriteString(`\n`)
		case '\r':
			c.b.WriteString(`\r`)
		default:
			c.b.WriteByte(ch)
		}
	}
	return c
}

func (c *copyRows) null() *copyRows {
	c.sep()
	c.b.WriteString(`\N`)
	return c
}

func (c *copyRows) int(v int64) *copyRows {
	c.sep()
	c.b.WriteString(strconv.FormatInt(v, 10))
	return c
}

func (c *copyRows) intPtr(v *int64) *copyRows {
	if v == nil {
		return c.null()
	}
	return c.int(*v)
}

func (c *copyRows) float(v *float64) *copyRows {
	if v == nil {
		return c.null()
	}
	c.sep()
	c.b.WriteString(strconv.FormatFloat(*v, 'g', -1, 64))
	return c
}

func (c *copyRows) bool(v bool) *copyRows {
	c.sep()
	if v {
		c.b.WriteByte('t')
	} else {
		c.b.WriteByte('f')
	}
	return c
}

// time writes t in UTC to the microsecond, Postgres's precision.
func (c *copyRows) time(t time.Time) *copyRows {
	c.sep()
	c.b.WriteString(t.UTC().Format("2006-01-02 15:04:05.999999Z07:00"))
	return c
}

// copyIn COPYs rs into their table on conn, in its transaction.
func copyIn(ctx context.Context, conn *pgx.Conn, rs *copyRows) error {
	if rs.n == 0 {
		return nil
	}
	rs.b.WriteByte('\n')
	sql := fmt.Sprintf("COPY %s (%s) FROM STDIN", rs.table, strings.Join(rs.columns, ", "))
	tag, err := conn.PgConn().CopyFrom(ctx, &rs.b, sql)
	if err != nil {
		return err
	}
	if tag.RowsAffected() != int64(rs.n) {
		return fmt.Errorf("copy %s: %d rows of %d", rs.table, tag.RowsAffected(), rs.n)
	}
	return nil
}
