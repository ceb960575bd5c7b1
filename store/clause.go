package store

import (
	"fmt"
	"sort"

	"gorm.io/gorm/clause"

	"github.com/leadsignal/leadsignal/migrations"
	"github.com/leadsignal/leadsignal/models"
)

func forUpdate() clause.Locking { return clause.Locking{Strength: clause.LockingStrengthUpdate} }

// lockRead is what a raw SELECT ends with to lock the rows it reads, per
// dialect: FOR UPDATE on Postgres; nothing on SQLite, whose one writer
// holds the whole database while its transaction writes.
func (s *Store) lockRead() string {
	if s.dialect == migrations.Postgres {
		return " FOR UPDATE"
	}
	return ""
}

func gormExpr(sql string, vars ...any) clause.Expr { return clause.Expr{SQL: sql, Vars: vars} }

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// sortEvents orders a claimed batch by event_time then id: RETURNING does
// not keep the CTE's order.
func sortEvents(evs []models.Event) {
	sort.Slice(evs, func(i, j int) bool {
		if !evs[i].EventTime.Equal(evs[j].EventTime) {
			return evs[i].EventTime.Before(evs[j].EventTime)
		}
		return evs[i].ID < evs[j].ID
	})
}
