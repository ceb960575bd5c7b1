// Package models holds the gorm structs that map leadsignal's tables and the
// typed constants of their status columns. It imports nothing of ours and
// makes no database calls: the store package owns every query.
package models

import "time"

// User is a person who logs in to the web UI.
type User struct {
	ID           int64
	Email        string
	PasswordHash string
	IsAdmin      bool
	// LastAccountID is the account the user looked at last, so the switcher
	// can bring them back to it after the next login.
	LastAccountID *int64
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Account is one client workspace: its leads, rules, datasets and members
// are invisible from every other account.
type Account struct {
	ID             int64
	Slug           string
	Name           string
	Timezone       string
	DefaultCountry string
	Currency       string
	CRMName        string `gorm:"column:crm_name"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Role is what a member may do inside an account.
type Role string

// Roles, from most to least powerful.
const (
	RoleOwner  Role = "owner"
	RoleEditor Role = "editor"
	RoleViewer Role = "viewer"
)

// Roles lists every role in order of power, for forms and validation.
var Roles = []Role{RoleOwner, RoleEditor, RoleViewer}

// Valid reports whether r is one of the defined roles.
func (r Role) Valid() bool {
	switch r {
	case RoleOwner, RoleEditor, RoleViewer:
		return true
	}
	return false
}

// rank orders roles so that a higher rank can do everything a lower one can.
func (r Role) rank() int {
	switch r {
	case RoleOwner:
		return 3
	case RoleEditor:
		return 2
	case RoleViewer:
		return 1
	}
	return 0
}

// AtLeast reports whether r grants everything min grants.
func (r Role) AtLeast(min Role) bool { return r.rank() >= min.rank() && min.rank() > 0 }

// Membership gives a user a role in an account.
type Membership struct {
	AccountID int64 `gorm:"primaryKey;autoIncrement:false"`
	UserID    int64 `gorm:"primaryKey;autoIncrement:false"`
	Role      Role
	CreatedAt time.Time
}

// Member is a membership joined with its user, for the members list.
type Member struct {
	UserID    int64
	Email     string
	Role      Role
	CreatedAt time.Time
}

// AccountAccess is an account as one user sees it: with their role in it.
type AccountAccess struct {
	Account
	Role Role
}
