package store

import (
	"context"
	"database/sql"
	"reflect"
	"sync"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"
	"gorm.io/gorm/schema"
)

// reads are queries that run together: on Postgres in one pipeline (one
// round trip), on SQLite one after another. Each is a gorm query, the same
// text on both databases; only how it reaches the database differs.
type reads struct {
	s   *Store
	ctx context.Context
	// keep has the queries keep their plans on Postgres (keptPlansSQL):
	// for reads of rows by key.
	keep  bool
	finds []find
}

// schemas caches the models' schemas that scanInto reads.
var schemas sync.Map

// find is a query whose rows go to dest, a pointer to a slice of a model,
// and then done (may be nil) runs.
type find struct {
	q    *gorm.DB
	dest any
	done func()
}

// find adds query q, to be found into dest (a pointer to a slice).
func (r *reads) find(q *gorm.DB, dest any, done func()) {
	r.finds = append(r.finds, find{q: q, dest: dest, done: done})
}

// run runs the queries.
func (r *reads) run() error {
	if r.s.dialect != "postgres" {
		for _, f := range r.finds {
			if err := f.q.Find(f.dest).Error; err != nil {
				return err
			}
			if f.done != nil {
				f.done()
			}
		}
		return nil
	}
	return r.s.pipeline(r.ctx, r.keep, func(b *pgx.Batch) error {
		for _, f := range r.finds {
			stmt := f.q.Session(&gorm.Session{DryRun: true}).Find(f.dest).Statement
			if stmt.Error != nil {
				return stmt.Error
			}
			// The rows are the destination's (a model, or a model with
			// more), not necessarily the query's model.
			sch, err := schema.Parse(f.dest, &schemas, r.s.db.NamingStrategy)
			if err != nil {
				return err
			}
			b.Queue(stmt.SQL.String(), stmt.Vars...).Query(func(rows pgx.Rows) error {
				if err := scanInto(r.ctx, rows, sch, f.dest); err != nil {
					return err
				}
				if f.done != nil {
					f.done()
				}
				return nil
			})
		}
		return nil
	})
}

// scanInto appends rows to dest, a pointer to a slice of sch's model, as
// gorm's Find would: each column into the field of its name, a NULL as the
// field's zero value, a column of no field dropped.
func scanInto(ctx context.Context, rows pgx.Rows, sch *schema.Schema, dest any) error {
	slice := reflect.ValueOf(dest).Elem()
	descs := rows.FieldDescriptions()
	fields := make([]*schema.Field, len(descs))
	for i, d := range descs {
		fields[i] = sch.LookUpField(d.Name)
	}
	targets := make([]any, len(descs))
	for rows.Next() {
		elem := reflect.New(slice.Type().Elem()).Elem()
		for i, f := range fields {
			if f == nil {
				targets[i] = new(any)
				continue
			}
			// A pointer to a pointer takes a NULL as nil.
			targets[i] = reflect.New(pointer(f.FieldType)).Interface()
		}
		if err := rows.Scan(targets...); err != nil {
			return err
		}
		for i, f := range fields {
			if f == nil {
				continue
			}
			v := reflect.ValueOf(targets[i]).Elem()
			switch {
			case v.IsNil():
			case f.FieldType.Kind() == reflect.Pointer:
				f.ReflectValueOf(ctx, elem).Set(v)
			default:
				f.ReflectValueOf(ctx, elem).Set(v.Elem())
			}
		}
		slice.Set(reflect.Append(slice, elem))
	}
	return rows.Err()
}

// pointer is t if it is a pointer type, else a pointer to t.
func pointer(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t
	}
	return reflect.PointerTo(t)
}

// rowScanner is a row being read, database/sql's or pgx's.
type rowScanner interface {
	Scan(dest ...any) error
}

// eachRow runs query q (gorm's text, a "?" for each of args) and calls
// scan with each of its rows, stopping at scan's first error, which it
// returns as it is: for reads of many rows, scanned by hand into their
// fields rather than through gorm's reflection. On Postgres, outside a
// transaction, the rows are pgx's own, which decode each column straight
// into scan's target; database/sql would make each a driver value first.
func (s *Store) eachRow(ctx context.Context, q string, args []any, scan func(rowScanner) error) error {
	if _, pool := s.conn().(*sql.DB); pool && s.dialect == "postgres" {
		stmt := s.q(ctx).Raw(q, args...).Statement
		if stmt.Error != nil {
			return stmt.Error
		}
		return s.withPgx(ctx, func(conn *pgx.Conn) error {
			rows, err := conn.Query(ctx, stmt.SQL.String(), stmt.Vars...)
			if err != nil {
				return err
			}
			defer rows.Close()
			return scanEach(rows, scan)
		})
	}
	rows, err := s.q(ctx).Raw(q, args...).Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	return scanEach(rows, scan)
}

// scanEach calls scan with each of rows (database/sql's or pgx's).
func scanEach(rows interface {
	rowScanner
	Next() bool
	Err() error
}, scan func(rowScanner) error) error {
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
