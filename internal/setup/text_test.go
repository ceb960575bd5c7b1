package setup

import (
	"strings"
	"testing"
)

// TestDecodeBOM: a file that starts with a UTF-8 byte-order mark, as some
// Windows editors save it, reads as the same file without it.
func TestDecodeBOM(t *testing.T) {
	t.Parallel()
	f, problems := Decode(strings.NewReader("\ufeff" + rulesJSON))
	if len(problems) > 0 {
		t.Fatalf("Decode(BOM + file) problems = %q; want none", problems)
	}
	want, _ := Decode(strings.NewReader(rulesJSON))
	if f.Account.Name != want.Account.Name || len(f.Datasets) != 1 || len(f.SendRules) != len(want.SendRules) {
		t.Errorf("Decode(BOM + file) = %+v; want %+v", f, want)
	}
	// Only at the start: elsewhere it is an invisible character.
	if _, problems := Decode(strings.NewReader(" \ufeff" + rulesJSON)); len(problems) == 0 {
		t.Error("Decode(space, BOM, file) has no problem; want invalid JSON")
	}
}

// TestDecodeNotUTF8: text that is not valid UTF-8 is a problem at its
// path, wherever it is, instead of U+FFFD put in silently.
func TestDecodeNotUTF8(t *testing.T) {
	t.Parallel()
	const bad = "\xff\xfe"
	tests := []struct {
		name, json string
		want       []string
	}{
		{"account name", `{"account": {"slug": "acme", "name": "Acme ` + bad + `"}}`,
			[]string{"account.name: is not valid UTF-8 text; save the file as UTF-8"}},
		{"Latin-1 dataset name", `{"datasets": [{"name": "Caf` + "\xe9" + `"}]}`,
			[]string{"datasets[0].name: is not valid UTF-8 text"}},
		{"half a surrogate pair", `{"datasets": [{"name": "Main"}, {"name": "x\ud800y"}]}`,
			[]string{"datasets[1].name: is not valid UTF-8 text"}},
		{"rule name", `{"send_rules": [{"name": "` + bad + `"}]}`,
			[]string{"send_rules[0].name: is not valid UTF-8 text"}},
		{"condition pattern", `{"send_rules": [{"name": "R", "conditions": [{"field": "message", "match_type": "contains", "pattern": "a` + bad + `"}]}]}`,
			[]string{"send_rules[0].conditions[0].pattern: is not valid UTF-8 text"}},
		{"currency", `{"send_rules": [{"name": "R", "currency": "E` + bad + `"}]}`,
			[]string{"send_rules[0].currency: is not valid UTF-8 text"}},
		{"value field", `{"send_rules": [{"name": "R", "value": {"field": "fields.` + bad + `"}}]}`,
			[]string{"send_rules[0].value.field: is not valid UTF-8 text"}},
		{"junk keyword", `{"junk": {"vendor_pitch": {"enabled": true, "keywords": ["seo", "` + bad + `"]}}}`,
			[]string{"junk.vendor_pitch.keywords: is not valid UTF-8 text"}},
		{"key", `{"account": {"slug": "acme", "n` + bad + `": "x"}}`,
			[]string{"account: a key is not valid UTF-8 text"}},
		{"a real U+FFFD is text", `{"account": {"name": "A` + "\ufffd" + ` \ufffd"}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problems := Decode(strings.NewReader(tt.json))
			if len(problems) != len(tt.want) {
				t.Fatalf("Decode(%q) problems = %q; want %q", tt.json, problems, tt.want)
			}
			for i, p := range problems {
				if !strings.HasPrefix(p.String(), tt.want[i]) {
					t.Errorf("Decode(%q) problem %d = %q; want it to start with %q", tt.json, i, p, tt.want[i])
				}
			}
		})
	}
}

// TestValidateNames: the names a file gives (the account's, its CRM's,
// its datasets' and its rules') are checked by internal/name: invisible
// and bidi-control characters are refused at their path.
func TestValidateNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(*File)
		want   []string
	}{
		{"valid, with a joiner and accents", func(f *File) {
			f.Account.Name, f.Datasets[0].Name, f.SendRules[0].Name = "Café 👩‍💻", "می\u200cخواهم", "Über"
			f.SendRules[0].Dataset = "می\u200cخواهم"
		}, nil},
		{"right-to-left override in the account name", func(f *File) { f.Account.Name = "Acme\u202egpj.exe" },
			[]string{"account.name: remove the invisible character U+202E"}},
		{"zero-width space in the CRM name", func(f *File) { f.Account.CRMName = "Hub\u200bSpot" },
			[]string{"account.crm_name: remove the invisible character U+200B"}},
		{"no CRM name", func(f *File) { f.Account.CRMName = "" }, nil},
		{"long CRM name", func(f *File) { f.Account.CRMName = strings.Repeat("c", 101) },
			[]string{"account.crm_name: use at most 100 characters"}},
		{"bidi isolate in a dataset name", func(f *File) { f.Datasets[1].Name = "Demo\u2066" },
			[]string{"datasets[1].name: remove the invisible character U+2066"}},
		{"tag character in a rule name", func(f *File) { f.SendRules[1].Name = "Big\U000E0041" },
			[]string{"send_rules[1].name: remove the invisible character U+E0041"}},
		{"control character in a rule name", func(f *File) { f.SendRules[0].Name = "Completed\tleads" },
			[]string{"send_rules[0].name: remove the invisible character U+0009"}},
		{"byte-order mark inside a name", func(f *File) { f.Datasets[0].Name = "Ma\ufeffin" },
			[]string{"datasets[0].name: remove the invisible character U+FEFF"}},
		{"100 characters", func(f *File) { f.SendRules[0].Name = strings.Repeat("é", 100) }, nil},
		{"101 characters", func(f *File) { f.SendRules[0].Name = strings.Repeat("é", 101) },
			[]string{"send_rules[0].name: use at most 100 characters"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := rulesFile()
			tt.change(&f)
			got := f.Validate(env(acmeEnv()))
			if len(got) != len(tt.want) {
				t.Fatalf("Validate = %q; want %q", got, tt.want)
			}
			for i, p := range got {
				if !strings.HasPrefix(p.String(), tt.want[i]) {
					t.Errorf("problem %d = %q; want it to start with %q", i, p, tt.want[i])
				}
			}
		})
	}
}
