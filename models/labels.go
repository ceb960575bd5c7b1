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
func (l Labels) Value() (driver.Value, error) { return jsonList(l) }

// Scan implements sql.Scanner.
func (l *Labels) Scan(src any) error {
	var out []string
	if err := scanJSON(src, "labels", &out); err != nil {
		return err
	}
	*l = out
	return nil
}

// jsonList is a list as a JSON text column keeps it: "[]" for none.
func jsonList[T any](vs []T) (driver.Value, error) {
	if len(vs) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(vs)
	return string(b), err
}

// scanJSON reads a JSON text column, as a driver gives it (text or
// bytes), into dst; NULL and an empty text leave dst as it is. what names
// the column's type in errors.
func scanJSON(src any, what string, dst any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("models: %s from %T", what, src)
	}
	if len(b) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("models: %s: %w", what, err)
	}
	return nil
}
