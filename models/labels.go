package models

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
)

// Labels is a list of labels kept in one text column as a JSON array
// ("[]" when empty, never NULL).
type Labels []string

// Value implements driver.Valuer.
func (l Labels) Value() (driver.Value, error) {
	if l == nil {
		return "[]", nil
	}
	b, err := json.Marshal([]string(l))
	return string(b), err
}

// Scan implements sql.Scanner.
func (l *Labels) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		*l = nil
		return nil
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("labels: cannot scan %T", src)
	}
	var out []string
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Errorf("labels: %w", err)
	}
	*l = out
	return nil
}
