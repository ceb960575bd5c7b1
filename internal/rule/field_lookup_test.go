package rule

import "testing"

// Schema.Field finds what the rule form names: built-in fields, and form
// fields whether a lead had them lately or not; never a stage change's
// field, which a send rule cannot name, nor a name of nothing.
func TestSchemaField(t *testing.T) {
	s := Schema{Custom: []string{"budget"}}
	tests := []struct {
		name  string
		label string
		kind  Kind
		ok    bool
	}{
		{"email_is_free", "Free email provider (gmail.com, ...)", Bool, true},
		{"fields.budget", "Form field budget", Text, true},
		{"fields.never_seen", "Form field never_seen", Text, true},
		{"fields.", "", "", false},
		{ChangeFields()[0].Name, "", "", false},
		{"no_such_field", "", "", false},
	}
	for _, tt := range tests {
		f, ok := s.Field(tt.name)
		if ok != tt.ok || f.Label != tt.label || f.Kind != tt.kind {
			t.Errorf("Field(%q) = %q %q, %v; want %q %q, %v", tt.name, f.Label, f.Kind, ok, tt.label, tt.kind, tt.ok)
		}
	}
}
