package models

import "time"

// InstanceSettings are the settings of the whole instance that an
// administrator changes in the UI: one row (ID 1).
type InstanceSettings struct {
	ID int64
	// PublicURL is the address CRMs reach leadsignal at, as
	// config.PublicURL writes it; "" when unset. LEADSIGNAL_PUBLIC_URL,
	// when set, wins over it.
	PublicURL string
	UpdatedAt time.Time
	// UpdatedBy is the administrator who saved them last; nil once that
	// user is removed.
	UpdatedBy *int64
}

// TableName names InstanceSettings' table.
func (InstanceSettings) TableName() string { return "instance_settings" }
