package store

import "gorm.io/gorm/clause"

func forUpdate() clause.Locking { return clause.Locking{Strength: clause.LockingStrengthUpdate} }
