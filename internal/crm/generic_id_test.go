package crm

import (
	"strings"
	"testing"
)

// A generic object's own top-level "id" is not taken for leadsignal's lead
// id unless the mapping says so: it is usually the sender's deal or event.
func TestGenericTopLevelIDIsNotTheLead(t *testing.T) {
	changes, _, err := Parse(Generic, []byte(`{"id":42,"email":"jane@example.com","stage":"won"}`), nil)
	if err != nil || len(changes) != 1 {
		t.Fatalf("Parse = %v, %v", changes, err)
	}
	if got := changes[0].Lead; got.ID != "" || got.Email != "jane@example.com" {
		t.Errorf("lead = %+v; want the email only", got)
	}
	changes, _, err = Parse(Generic, []byte(`{"id":42,"stage":"won"}`), map[string]string{"id": "id"})
	if err != nil || changes[0].Lead.ID != "42" {
		t.Errorf("mapped id: %v, %v; want lead id 42", changes, err)
	}
	changes, _, err = Parse(Generic, []byte(`{"lead":{"id":7},"stage":"won"}`), nil)
	if err != nil || changes[0].Lead.ID != "7" {
		t.Errorf("stage API shape: %v, %v; want lead id 7", changes, err)
	}
	if changes, _, err := Parse(Generic, []byte(`{"id":42,"stage":"won"}`), nil); err != nil || !strings.Contains(changes[0].Problem, "no lead key") {
		t.Errorf("an object with only its own id: %+v, %v; want it to need attention: no lead key", changes, err)
	}
}

func TestFitKey(t *testing.T) {
	short := "hubspot:1:62515:987:dealstage:closedwon:1708986598741"
	if got := FitKey(short); got != short {
		t.Errorf("FitKey(%q) = %q; want it unchanged", short, got)
	}
	long := strings.Repeat("x", MaxKey+1)
	got := FitKey(long)
	if len(got) > MaxKey || !strings.HasPrefix(got, "sha256:") || got == FitKey(long+"y") {
		t.Errorf("FitKey(%d bytes) = %q; want a distinct sha256 within %d bytes", len(long), got, MaxKey)
	}
}

// A stored mapping reads back as it was written; none, or text that is not
// a JSON object of strings, reads as an empty mapping.
func TestStoredFields(t *testing.T) {
	want := map[string]string{"email": "contact.email", "stage": "deal.stage"}
	got, ok := StoredFields(FieldsJSON(want))
	if !ok || len(got) != 2 || got["email"] != "contact.email" || got["stage"] != "deal.stage" {
		t.Errorf("StoredFields(FieldsJSON(%v)) = %v, %v", want, got, ok)
	}
	if FieldsJSON(nil) != "{}" {
		t.Errorf("FieldsJSON(nil) = %q; want {}", FieldsJSON(nil))
	}
	for _, s := range []string{"", "  "} {
		if got, ok := StoredFields(s); !ok || got == nil || len(got) != 0 {
			t.Errorf("StoredFields(%q) = %v, %v; want an empty mapping", s, got, ok)
		}
	}
	if got, ok := StoredFields(`{"email": 3}`); ok || got == nil || len(got) != 0 {
		t.Errorf("StoredFields of a number = %v, %v; want empty and not ok", got, ok)
	}
}
