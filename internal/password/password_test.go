package password

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		pw   string
		ok   bool
	}{
		{"short", "short", false},
		{"ten", "0123456789", true},
		{"unicode counts runes", "ééééééééé", false},
		{"72 bytes", strings.Repeat("a", 72), true},
		{"73 bytes", strings.Repeat("a", 73), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Validate(tt.pw); (err == nil) != tt.ok {
				t.Errorf("Validate(%q) = %v; want ok=%v", tt.pw, err, tt.ok)
			}
		})
	}
}

func TestHashCheck(t *testing.T) {
	h, err := Hash("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !Check(h, "correct horse battery") {
		t.Error("Check(right password) = false")
	}
	if Check(h, "wrong horse battery") {
		t.Error("Check(wrong password) = true")
	}
	if Check("", "anything at all") {
		t.Error("Check(empty hash) = true")
	}
	if _, err := Hash("short"); err == nil {
		t.Error("Hash(short) succeeded")
	}
}
