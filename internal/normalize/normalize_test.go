package normalize

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

var fullInput = Input{
	Email:       " Joe@Eg.com ",
	Phone:       "(206) 207-2008",
	FirstName:   "Joe",
	LastName:    "Smith",
	City:        "Menlo Park",
	State:       "California",
	Zip:         "94025-1234",
	Country:     "United States",
	Gender:      "Male",
	DateOfBirth: "1990-01-02",
	ExternalID:  "CRM-42",
	ClientIP:    "203.0.113.7",
	UserAgent:   " Mozilla/5.0 ",
	FBC:         "fb.1.1554763741205.AbCdEf",
	FBP:         "fb.1.1596403881668.1116446470",
	CapturedAt:  captured,
}

func TestNormalize(t *testing.T) {
	k := Normalize(fullInput)
	want := Keys{
		Email:        Key{"joe@eg.com", "8830eedd6c6b5ea97d181563a349476ca1bb25ace1f94b5c5e48d9cad727941b"},
		Phone:        Key{"12062072008", "b82999fbe6c6a1e3807a652afe03612d1d45dfc56a481435ab00ca772b6d881c"},
		FirstName:    Key{"joe", "78675cc176081372c43abab3ea9fb70c74381eb02dc6e93fb6d44d161da6eeb3"},
		LastName:     Key{"smith", "6627835f988e2c5e50533d491163072d3f4f41f5c8b04630150debb3722ca2dd"},
		City:         Key{"menlopark", "0007a3d64c01e23d5075203c5977c14e4f7e01a3fc570686fcc50b5e1dd42685"},
		State:        Key{"ca", "6959097001d10501ac7d54c0bdb8db61420f658f2922cc26e46d536119a31126"},
		Zip:          Key{"94025", Hash("94025")},
		Country:      Key{"us", "79adb2a2fce5c6ba215fe5f27f532d4e7edbac4b6a5e09e1ef3a08084a904621"},
		Gender:       Key{"m", "62c66a7a5dd70c3146618063c344e531e6d4b59e379808443ce962b3abd63c5a"},
		DateOfBirth:  Key{"19900102", Hash("19900102")},
		ExternalID:   Key{"crm-42", Hash("crm-42")},
		ClientIP:     "203.0.113.7",
		UserAgent:    "Mozilla/5.0",
		FBC:          "fb.1.1554763741205.AbCdEf",
		FBP:          "fb.1.1596403881668.1116446470",
		PhoneCountry: "US",
	}
	if !reflect.DeepEqual(k, want) {
		t.Errorf("Normalize(full lead) =\n%+v\nwant\n%+v", k, want)
	}
	if m := k.Missing(); len(m) != 0 {
		t.Errorf("Normalize(full lead).Missing() = %q; want none", m)
	}
}

func TestNormalizeEmpty(t *testing.T) {
	k := Normalize(Input{DefaultCountry: "US"})
	if !reflect.DeepEqual(k, Keys{}) {
		t.Errorf("Normalize(empty) = %+v; want no keys and no problems", k)
	}
	if ud := k.UserData(); len(ud) != 0 {
		t.Errorf("Normalize(empty).UserData() = %v; want empty", ud)
	}
	if k.HasContactKey() {
		t.Errorf("Normalize(empty).HasContactKey() = true; want false")
	}
}

func TestNormalizeProblems(t *testing.T) {
	in := Input{
		Email: "joe@", Phone: "555", FirstName: "--", LastName: "!", City: "123", State: "..",
		Zip: "A", Country: "Atlantis", Gender: "x", DateOfBirth: "03/04/1990",
		ClientIP: "10.0.0.1", FBC: "bad", FBP: "bad", DefaultCountry: "US",
	}
	k := Normalize(in)
	var fields []string
	for _, p := range k.Problems {
		fields = append(fields, p.Field)
		if p.Value == "" || p.Reason == "" {
			t.Errorf("Normalize(bad lead) problem %+v; want its raw value and a reason", p)
		}
	}
	want := []string{"em", "ph", "fn", "ln", "ct", "st", "zp", "country", "ge", "db", "client_ip_address", "fbc", "fbp"}
	if !slices.Equal(fields, want) {
		t.Errorf("Normalize(bad lead) problem fields = %q; want %q", fields, want)
	}
	if ud := k.UserData(); len(ud) != 0 {
		t.Errorf("Normalize(bad lead).UserData() = %v; want empty", ud)
	}
	// The raw values are kept for a person to fix.
	if !hasProblem(k, Problem{Field: "em", Value: "joe@", Reason: "not a valid email address"}) {
		t.Errorf("Normalize(bad lead).Problems = %+v; want em %q kept", k.Problems, "joe@")
	}
}

// TestHashedPassThrough: a value that already is a SHA-256 is sent as it is
// (lowercased) for every hashed key, never hashed twice.
func TestHashedPassThrough(t *testing.T) {
	const upper = "A665A45920422F9D417E4867EFDC4FB8A04A1F3FFF1FA07E998E86F7F7A27AE3"
	k := Normalize(Input{
		Email: upper, Phone: upper, FirstName: upper, LastName: upper, City: upper, State: upper,
		Zip: upper, Country: upper, Gender: upper, DateOfBirth: upper, ExternalID: upper,
	})
	if len(k.Problems) != 0 {
		t.Errorf("Normalize(hashes).Problems = %+v; want none", k.Problems)
	}
	want := Key{Normalized: someHash, Hash: someHash}
	for name, got := range map[string]Key{
		"em": k.Email, "ph": k.Phone, "fn": k.FirstName, "ln": k.LastName, "ct": k.City, "st": k.State,
		"zp": k.Zip, "country": k.Country, "ge": k.Gender, "db": k.DateOfBirth, "external_id": k.ExternalID,
	} {
		if got != want {
			t.Errorf("Normalize(%s %q) = %+v; want %+v", name, upper, got, want)
		}
	}
}

func TestMissing(t *testing.T) {
	all := []string{"em", "ph", "fn", "ln", "ct", "st", "zp", "country", "ge", "db", "external_id",
		"client_ip_address", "client_user_agent", "fbc", "fbp"}
	tests := []struct {
		name string
		in   Input
		want []string
	}{
		{"nothing", Input{}, all},
		{"email and fbp", Input{Email: "a@b.co", FBP: "fb.1.1.1"}, all[1:14]},
		{"phone kept raw is missing", Input{Phone: "12", Country: "US", UserAgent: "UA"},
			slices.Concat(all[:7], all[8:12], all[13:])},
		{"everything", fullInput, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Normalize(tt.in).Missing(); !slices.Equal(got, tt.want) {
				t.Errorf("Normalize(%+v).Missing() = %q; want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestUserData(t *testing.T) {
	k := Normalize(Input{
		Email: "joe@eg.com", Phone: "+12062072008", ClientIP: "203.0.113.7", UserAgent: "UA",
		FBCLID: "AbC", FBP: "fb.1.1596403881668.1116446470", CapturedAt: captured,
	})
	want := map[string]any{
		"em":                []string{"8830eedd6c6b5ea97d181563a349476ca1bb25ace1f94b5c5e48d9cad727941b"},
		"ph":                []string{"b82999fbe6c6a1e3807a652afe03612d1d45dfc56a481435ab00ca772b6d881c"},
		"client_ip_address": "203.0.113.7",
		"client_user_agent": "UA",
		"fbc":               "fb.1.1772366400123.AbC",
		"fbp":               "fb.1.1596403881668.1116446470",
	}
	if got := k.UserData(); !reflect.DeepEqual(got, want) {
		t.Errorf("UserData() = %v; want %v", got, want)
	}
	b, err := json.Marshal(k.UserData())
	if err != nil {
		t.Fatal(err)
	}
	const wantJSON = `{"client_ip_address":"203.0.113.7","client_user_agent":"UA",` +
		`"em":["8830eedd6c6b5ea97d181563a349476ca1bb25ace1f94b5c5e48d9cad727941b"],` +
		`"fbc":"fb.1.1772366400123.AbC","fbp":"fb.1.1596403881668.1116446470",` +
		`"ph":["b82999fbe6c6a1e3807a652afe03612d1d45dfc56a481435ab00ca772b6d881c"]}`
	if string(b) != wantJSON {
		t.Errorf("json(UserData()) = %s; want %s", b, wantJSON)
	}
}

func TestHasContactKey(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want bool
	}{
		{"email", Input{Email: "a@b.co"}, true},
		{"phone", Input{Phone: "+12062072008"}, true},
		{"external id", Input{ExternalID: "42"}, true},
		{"fbc", Input{FBC: "fb.1.1554763741205.abc"}, true},
		{"rebuilt fbc", Input{FBCLID: "abc", CapturedAt: captured}, true},
		{"fbp only", Input{FBP: "fb.1.1596403881668.1116446470"}, false},
		{"names and ip only", Input{FirstName: "Joe", LastName: "Smith", ClientIP: "203.0.113.7"}, false},
		{"invalid email", Input{Email: "joe"}, false},
		{"impossible phone", Input{Phone: "123", Country: "US"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Normalize(tt.in).HasContactKey(); got != tt.want {
				t.Errorf("Normalize(%+v).HasContactKey() = %v; want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestKeysJSON(t *testing.T) {
	k := Normalize(Input{Email: "joe@eg.com", Phone: "123", Country: "US", FBCLID: "x", CapturedAt: captured})
	b, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"em":{"normalized":"joe@eg.com","hash":"8830eedd6c6b5ea97d181563a349476ca1bb25ace1f94b5c5e48d9cad727941b"},` +
		`"ph":{"normalized":"123"},` +
		`"country":{"normalized":"us","hash":"79adb2a2fce5c6ba215fe5f27f532d4e7edbac4b6a5e09e1ef3a08084a904621"},` +
		`"fbc":"fb.1.1772366400123.x","fbc_rebuilt":true,"phone_country":"US",` +
		`"problems":[{"field":"ph","value":"123","reason":"not a possible phone number for US"}]}`
	if string(b) != want {
		t.Errorf("json.Marshal(keys) =\n%s\nwant\n%s", b, want)
	}
	var back Keys
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, k) {
		t.Errorf("json round trip = %+v, %v; want %+v", back, err, k)
	}
}

func TestNormalizeCountryContext(t *testing.T) {
	tests := []struct {
		name             string
		in               Input
		wantPh, wantSt   string
		wantZp           string
		wantPhoneCountry string
	}{
		{"lead country decides", Input{Phone: "020 7183 8750", State: "Kent", Zip: "NR9 5AL", Country: "GB", DefaultCountry: "US"},
			"442071838750", "kent", "nr95al", "GB"},
		{"default country fills in", Input{Phone: "206 207 2008", State: "Washington", Zip: "981214892", DefaultCountry: "US"},
			"12062072008", "wa", "98121", "US"},
		{"non-US default: no state mapping", Input{Phone: "0612345678", State: "Georgia", DefaultCountry: "FR"},
			"33612345678", "georgia", "", "FR"},
		{"no country at all: US state rules", Input{Phone: "+1 206 207 2008", State: "Georgia"},
			"12062072008", "ga", "", "US"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := Normalize(tt.in)
			if k.Phone.Normalized != tt.wantPh || k.State.Normalized != tt.wantSt || k.Zip.Normalized != tt.wantZp ||
				k.PhoneCountry != tt.wantPhoneCountry {
				t.Errorf("Normalize(%+v) = ph %q st %q zp %q phone_country %q; want %q %q %q %q", tt.in,
					k.Phone.Normalized, k.State.Normalized, k.Zip.Normalized, k.PhoneCountry,
					tt.wantPh, tt.wantSt, tt.wantZp, tt.wantPhoneCountry)
			}
		})
	}
}
