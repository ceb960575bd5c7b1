package normalize

import (
	"slices"
	"testing"
	"time"
)

var captured = time.Date(2026, 3, 1, 12, 0, 0, 123_000_000, time.UTC) // 1772366400123 ms

func TestFBC(t *testing.T) {
	const clid = "IwAR2F4-dbP0l7Mn1IawQQGCINEz7PYXQvwjNwB_qa2ofrHyiLjcbCRxTDMgk"
	tests := []struct {
		name           string
		cookie, fbclid string
		at             time.Time
		want           string
		rebuilt, ok    bool
	}{
		{"keep 4 segments", "fb.1.1554763741205." + clid, "", captured, "fb.1.1554763741205." + clid, false, true},
		{"keep 5 segments, 8-char appendix", "fb.1.1234567890.abcd.AQQCAQAA", "", captured, "fb.1.1234567890.abcd.AQQCAQAA", false, true},
		{"keep 5 segments, language token", "fb.2.1554763741205.AbCdEf.Ag", "", captured, "fb.2.1554763741205.AbCdEf.Ag", false, true},
		{"keep cookie over a different fbclid", "fb.1.1554763741205.OldClick", "NewClick", captured, "fb.1.1554763741205.OldClick", false, true},
		{"case preserved", "fb.1.1554763741205.AbC_dEf-GHI", "", captured, "fb.1.1554763741205.AbC_dEf-GHI", false, true},
		{"trimmed", "  fb.1.1554763741205.AbC  ", "", captured, "fb.1.1554763741205.AbC", false, true},
		{"missing cookie, fbclid", "", clid, captured, "fb.1.1772366400123." + clid, true, true},
		{"malformed cookie, fbclid rebuilds with capture ms", "fb.1.notatime.abc", "AbCdEf", captured, "fb.1.1772366400123.AbCdEf", true, true},
		{"bad appendix, fbclid", "fb.1.1554763741205.abc.XYZ", "AbCdEf", captured, "fb.1.1772366400123.AbCdEf", true, true},
		{"6 segments, fbclid", "fb.1.1554763741205.abc.AQQCAQAA.x", "AbCdEf", captured, "fb.1.1772366400123.AbCdEf", true, true},
		{"uppercase FB prefix is malformed", "FB.1.1554763741205.abc", "AbCdEf", captured, "fb.1.1772366400123.AbCdEf", true, true},
		{"fbclid case preserved", "", "aBcD", captured, "fb.1.1772366400123.aBcD", true, true},
		{"capture time in another zone is the same instant", "", "x",
			captured.In(time.FixedZone("x", -5*3600)), "fb.1.1772366400123.x", true, true},
		{"malformed cookie, no fbclid", "fb.1.1554763741205", "", captured, "", false, false},
		{"malformed cookie, empty payload", "fb.1.1554763741205.", "", captured, "", false, false},
		{"fbclid with a dot", "", "abc.def", captured, "", false, false},
		{"fbclid with a space", "", "abc def", captured, "", false, false},
		{"no capture time", "", "abc", time.Time{}, "", false, false},
		{"nothing", "", "", captured, "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, rebuilt, ok := FBC(tt.cookie, tt.fbclid, tt.at)
			if got != tt.want || rebuilt != tt.rebuilt || ok != tt.ok {
				t.Errorf("FBC(%q, %q, %v) = %q, %v, %v; want %q, %v, %v",
					tt.cookie, tt.fbclid, tt.at, got, rebuilt, ok, tt.want, tt.rebuilt, tt.ok)
			}
		})
	}
}

func TestNormalizeFBC(t *testing.T) {
	tests := []struct {
		name           string
		cookie, fbclid string
		wantFBC        string
		wantRebuilt    bool
		wantProblems   []Problem
	}{
		{"good cookie", "fb.1.1554763741205.abc", "", "fb.1.1554763741205.abc", false, nil},
		{"rebuilt, no problem", "", "abc", "fb.1.1772366400123.abc", true, nil},
		{"malformed cookie rebuilt", "fb.x", "abc", "fb.1.1772366400123.abc", true,
			[]Problem{{"fbc", "fb.x", "malformed _fbc cookie, rebuilt from fbclid"}}},
		{"malformed cookie, no fbclid", "fb.x", "", "", false,
			[]Problem{{"fbc", "fb.x", "malformed _fbc cookie and no fbclid to rebuild it"}}},
		{"malformed fbclid", "", "a.b", "", false,
			[]Problem{{"fbc", "a.b", "malformed fbclid"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := Normalize(Input{FBC: tt.cookie, FBCLID: tt.fbclid, CapturedAt: captured})
			if k.FBC != tt.wantFBC || k.FBCRebuilt != tt.wantRebuilt {
				t.Errorf("Normalize(fbc %q, fbclid %q) = %q, rebuilt %v; want %q, %v",
					tt.cookie, tt.fbclid, k.FBC, k.FBCRebuilt, tt.wantFBC, tt.wantRebuilt)
			}
			if !slices.Equal(k.Problems, tt.wantProblems) {
				t.Errorf("Normalize(fbc %q, fbclid %q).Problems = %+v; want %+v", tt.cookie, tt.fbclid, k.Problems, tt.wantProblems)
			}
		})
	}
}

func TestFBP(t *testing.T) {
	runSingle(t, "FBP", FBP, []single{
		{"fb.1.1596403881668.1116446470", "fb.1.1596403881668.1116446470", true},
		{" fb.2.1596403881668.1116446470 ", "fb.2.1596403881668.1116446470", true},
		{"fb.1.1596403881668.1116446470.Ag", "fb.1.1596403881668.1116446470.Ag", true},
		{"fb.1.1596403881668.1116446470.AQQCAQAA", "fb.1.1596403881668.1116446470.AQQCAQAA", true},
		{"fb.1.1596403881668", "", false},
		{"fb.1.1596403881668.", "", false},
		{"fb.1.x.1116446470", "", false},
		{"fb.1.1596403881668.1116446470.toolongappendix", "", false},
		{"GA1.2.1116446470.1596403881", "", false},
		{"", "", false},
	})
}

func TestClientIP(t *testing.T) {
	runSingle(t, "ClientIP", ClientIP, []single{
		{"203.0.113.7", "203.0.113.7", true},
		{" 203.0.113.7 ", "203.0.113.7", true},
		{"203.0.113.7:51234", "203.0.113.7", true},
		{"2001:db8::1", "2001:db8::1", true},
		{"2001:DB8:0:0:0:0:0:1", "2001:db8::1", true},
		{"[2001:db8::1]:443", "2001:db8::1", true},
		{"::ffff:203.0.113.7", "203.0.113.7", true},
		{"10.0.0.1", "", false},
		{"192.168.1.20", "", false},
		{"127.0.0.1", "", false},
		{"::1", "", false},
		{"fe80::1%eth0", "", false},
		{"0.0.0.0", "", false},
		{"224.0.0.1", "", false},
		{"203.0.113.7, 198.51.100.1", "", false},
		{"999.1.1.1", "", false},
		{"localhost", "", false},
		{"", "", false},
	})
}
