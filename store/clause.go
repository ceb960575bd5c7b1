package store

import "gorm.io/gorm/clause"

func forUpdate() clause.Locking { return clause.Locking{Strength: clause.LockingStrengthUpdate} }

func gormExpr(sql string, vars ...any) clause.Expr { return clause.Expr{SQL: sql, Vars: vars} }
