package normalize

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// emptyHash is Hash(""): it must never appear as a key.
const emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

var problemFields = []string{"em", "ph", "fn", "ln", "ct", "st", "zp", "country", "ge", "db", "external_id",
	"client_ip_address", "client_user_agent", "fbc", "fbp"}

func checkKey(t *testing.T, name string, k Key) {
	t.Helper()
	switch {
	case k.Hash == "":
	case k.Hash == emptyHash:
		t.Errorf("%s = %+v: hash of the empty string", name, k)
	case k.Normalized == "":
		t.Errorf("%s = %+v: a hash with no normalised value", name, k)
	case !IsHashed(k.Hash) || strings.ToLower(k.Hash) != k.Hash:
		t.Errorf("%s = %+v: hash is not lowercase SHA-256 hex", name, k)
	case k.Hash != Hash(k.Normalized) && k.Hash != k.Normalized:
		t.Errorf("%s = %+v: hash is neither Hash(normalized) nor a passed-through hash", name, k)
	}
}

func FuzzNormalize(f *testing.F) {
	add := func(in Input) {
		f.Add(in.Email, in.Phone, in.FirstName, in.LastName, in.City, in.State, in.Zip, in.Country,
			in.Gender, in.DateOfBirth, in.ExternalID, in.ClientIP, in.UserAgent, in.FBC, in.FBP, in.FBCLID,
			in.CapturedAt.UnixMilli(), in.DefaultCountry)
	}
	add(fullInput)
	add(Input{})
	add(Input{Email: "joe@", Phone: "555", FirstName: "--", City: "123", State: "..", Zip: "A", Country: "Atlantis",
		Gender: "x", DateOfBirth: "03/04/1990", ClientIP: "10.0.0.1", FBC: "bad", FBP: "bad", FBCLID: "a.b", DefaultCountry: "US"})
	add(Input{Phone: "+44 20 7183 8750 ext. 9", FBC: "fb.1.1234567890.abcd.AQQCAQAA", FBCLID: "IwAR", CapturedAt: captured})
	add(Input{Email: someHash, Phone: "0044 1239 0821300", State: "Washington, D.C.", Zip: "98 121-9431", Country: "US!",
		DateOfBirth: "1990-01-02T23:30:00-05:00", Gender: "Kadın", FirstName: "Jose\u0301"})
	f.Fuzz(func(t *testing.T, em, ph, fn, ln, ct, st, zp, country, ge, db, extID, ip, ua, fbc, fbp, fbclid string,
		capturedMs int64, defaultCountry string) {
		in := Input{
			Email: em, Phone: ph, FirstName: fn, LastName: ln, City: ct, State: st, Zip: zp, Country: country,
			Gender: ge, DateOfBirth: db, ExternalID: extID, ClientIP: ip, UserAgent: ua,
			FBC: fbc, FBP: fbp, FBCLID: fbclid, CapturedAt: time.UnixMilli(capturedMs), DefaultCountry: defaultCountry,
		}
		k := Normalize(in)
		for name, key := range map[string]Key{
			"em": k.Email, "ph": k.Phone, "fn": k.FirstName, "ln": k.LastName, "ct": k.City, "st": k.State,
			"zp": k.Zip, "country": k.Country, "ge": k.Gender, "db": k.DateOfBirth, "external_id": k.ExternalID,
		} {
			checkKey(t, name, key)
		}
		if n, m := len(k.UserData()), len(k.Missing()); n+m != len(problemFields) {
			t.Errorf("len(UserData()) %d + len(Missing()) %d = %d; want %d", n, m, n+m, len(problemFields))
		}
		for _, p := range k.Problems {
			if !slices.Contains(problemFields, p.Field) || p.Reason == "" {
				t.Errorf("Problem %+v: unknown field or no reason", p)
			}
		}
		if k.FBC != "" && !validFBC(k.FBC) {
			t.Errorf("FBC = %q: not a well-formed fbc", k.FBC)
		}
		if k.FBCRebuilt && k.FBC == "" {
			t.Errorf("FBCRebuilt with no FBC")
		}
		if k.FBP != "" && k.FBP != strings.TrimSpace(fbp) {
			t.Errorf("FBP = %q; want the cookie %q unchanged", k.FBP, fbp)
		}
	})
}

// FuzzNormalizers feeds one value to every normaliser: none panics, ok
// always comes with a value that hashes to a real key, and normalising a
// normalised value changes nothing.
func FuzzNormalizers(f *testing.F) {
	for _, s := range []string{"", "Joe@Eg.com", "(206) 207-2008", "+44 20 7183 8750", "José", "San José",
		"California", "98121-4892", "NR9 5AL", "United States", "Male", "Kadın", "25/12/1990", "19900102",
		"  User 123 ", someHash, "fb.1.1554763741205.AbC", "fb.1.1596403881668.1116446470.Ag",
		"203.0.113.7:80", "Jose\u0301", "e♥\u0301"} {
		f.Add(s, "US")
		f.Add(s, "")
	}
	f.Fuzz(func(t *testing.T, s, country string) {
		one := map[string]func(string) (string, bool){
			"Email": Email, "Name": Name, "City": City, "Country": Country, "Gender": Gender,
			"DateOfBirth": DateOfBirth, "ExternalID": ExternalID, "FBP": FBP, "ClientIP": ClientIP,
			"State": func(s string) (string, bool) { return State(s, country) },
			"Zip":   func(s string) (string, bool) { return Zip(s, country) },
		}
		for name, norm := range one {
			v, ok := norm(s)
			if ok != (v != "") {
				t.Fatalf("%s(%q) = %q, %v: ok must mean a value", name, s, v, ok)
			}
			if !ok {
				continue
			}
			checkKey(t, name, keyOf(v))
			if again, ok := norm(v); again != v || !ok {
				t.Errorf("%s(%q) = %q; %s(%q) = %q, %v; want it unchanged", name, s, v, name, v, again, ok)
			}
		}

		v, region, ok := Phone(s, country, "")
		if ok != (v != "") {
			t.Fatalf("Phone(%q, %q) = %q, %q, %v: ok must mean a value", s, country, v, region, ok)
		}
		if ok && !IsHashed(v) {
			checkKey(t, "Phone", keyOf(v))
			if !AllDigits(v) {
				t.Errorf("Phone(%q, %q) = %q: not all digits", s, country, v)
			}
			if again, _, _ := Phone("+"+v, "", ""); again != v {
				t.Errorf("Phone(%q, %q) = %q; Phone(%q) = %q; want it unchanged", s, country, v, "+"+v, again)
			}
		}

		fbc, rebuilt, ok := FBC(s, country, captured)
		if ok != (fbc != "") || rebuilt && !ok {
			t.Fatalf("FBC(%q, %q) = %q, %v, %v: inconsistent", s, country, fbc, rebuilt, ok)
		}
		if ok {
			if again, rebuiltAgain, _ := FBC(fbc, "", captured); again != fbc || rebuiltAgain {
				t.Errorf("FBC(%q, %q) = %q; FBC(%q) = %q, %v; want it kept", s, country, fbc, fbc, again, rebuiltAgain)
			}
		}
	})
}
