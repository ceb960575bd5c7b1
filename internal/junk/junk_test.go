package junk

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func ptr(f float64) *float64 { return &f }

// everything trips every signal at once.
var everything = Input{
	FillSeconds: ptr(0.5),
	Honeypot:    "http://spam.example",
	Phone:       "1111111111",
	Email:       "x@mailinator",
	Message:     "We offer SEO services. Also, please find my CV attached.",
	Duplicate:   true,
}

func TestCheckAllSignalsInOrder(t *testing.T) {
	in := everything
	in.Email = "bad@@mailinator.com"
	got := Check(in, Defaults())
	var sigs []Signal
	for _, r := range got {
		sigs = append(sigs, r.Signal)
		if r.Message == "" {
			t.Errorf("Check: %s has an empty message", r.Signal)
		}
	}
	if !slices.Equal(sigs, Signals) {
		t.Errorf("Check(everything) signals = %v; want %v", sigs, Signals)
	}
}

func TestCheckNothing(t *testing.T) {
	in := Input{
		FillSeconds: ptr(42),
		Phone:       "14155552671",
		Email:       "jane.doe@example.com",
		Message:     "I'd like a quote for a new roof, please call me after 5pm.",
	}
	in.PhoneNational = in.Phone[1:]
	if got := Check(in, Defaults()); got != nil {
		t.Errorf("Check(%+v) = %v; want nil", in, got)
	}
	if got := Check(Input{}, Defaults()); got != nil {
		t.Errorf("Check(empty input) = %v; want nil", got)
	}
	if got := Check(everything, nil); got != nil {
		t.Errorf("Check(everything, nil settings) = %v; want nil", got)
	}
}

func TestCheckDisabledNeverFires(t *testing.T) {
	for _, sig := range Signals {
		t.Run(string(sig), func(t *testing.T) {
			s := Defaults()
			st := s[sig]
			st.Enabled = false
			s[sig] = st
			for _, r := range Check(everything, s) {
				if r.Signal == sig {
					t.Errorf("Check with %s disabled = %v; want no %s", sig, r, sig)
				}
			}
			delete(s, sig)
			for _, r := range Check(everything, s) {
				if r.Signal == sig {
					t.Errorf("Check with %s missing = %v; want no %s", sig, r, sig)
				}
			}
		})
	}
}

// only runs Check with one signal enabled and returns its message, "" when
// it did not fire.
func only(t *testing.T, sig Signal, st Setting, in Input) string {
	t.Helper()
	st.Enabled = true
	got := Check(in, Settings{sig: st})
	switch {
	case len(got) == 0:
		return ""
	case len(got) > 1 || got[0].Signal != sig:
		t.Fatalf("Check with only %s = %v", sig, got)
	}
	return got[0].Message
}

func TestTooFast(t *testing.T) {
	tests := []struct {
		name      string
		seconds   *float64
		threshold float64
		want      string
	}{
		{"unknown", nil, 0, ""},
		{"bot", ptr(0.8), 0, "form filled in 0.8 s (under 2 s)"},
		{"instant", ptr(0), 0, "form filled in 0 s (under 2 s)"},
		{"rounded", ptr(1.96), 0, "form filled in 2 s (under 2 s)"},
		{"at threshold", ptr(2), 0, ""},
		{"human", ptr(35.2), 0, ""},
		{"negative is a broken timer", ptr(-1), 0, ""},
		{"NaN", ptr(math.NaN()), 0, ""},
		{"infinite", ptr(math.Inf(1)), 0, ""},
		{"raised threshold", ptr(3), 5, "form filled in 3 s (under 5 s)"},
		{"lowered threshold", ptr(1.5), 1, ""},
		{"fractional threshold", ptr(1.2), 1.5, "form filled in 1.2 s (under 1.5 s)"},
		{"negative threshold means default", ptr(1), -3, "form filled in 1 s (under 2 s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := only(t, TooFast, Setting{Threshold: tt.threshold}, Input{FillSeconds: tt.seconds})
			if got != tt.want {
				t.Errorf("tooFast(%v, threshold %v) = %q; want %q", tt.seconds, tt.threshold, got, tt.want)
			}
		})
	}
}

func TestHoneypot(t *testing.T) {
	tests := []struct {
		value string
		want  string
	}{
		{"", ""},
		{"   \t\n", ""},
		{"x", `hidden honeypot field filled in with "x"`},
		{"  http://spam.example  ", `hidden honeypot field filled in with "http://spam.example"`},
		{strings.Repeat("a", 50), `hidden honeypot field filled in with "` + strings.Repeat("a", 40) + `..."`},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			if got := only(t, Honeypot, Setting{}, Input{Honeypot: tt.value}); got != tt.want {
				t.Errorf("honeypot(%q) = %q; want %q", tt.value, got, tt.want)
			}
		})
	}
}

func TestDuplicate(t *testing.T) {
	tests := []struct {
		name      string
		dup       bool
		threshold float64
		want      string
	}{
		{"not a duplicate", false, 0, ""},
		{"default window", true, 0, "the same email or phone wrote in within the last 7 days"},
		{"one day", true, 1, "the same email or phone wrote in within the last 1 day"},
		{"thirty days", true, 30, "the same email or phone wrote in within the last 30 days"},
		{"half a day", true, 0.5, "the same email or phone wrote in within the last 0.5 days"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := only(t, Duplicate, Setting{Threshold: tt.threshold}, Input{Duplicate: tt.dup})
			if got != tt.want {
				t.Errorf("duplicate(%v, threshold %v) = %q; want %q", tt.dup, tt.threshold, got, tt.want)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	d := Defaults()
	if len(d) != len(Signals) {
		t.Fatalf("len(Defaults()) = %d; want %d", len(d), len(Signals))
	}
	want := map[Signal]float64{TooFast: 2, Duplicate: 7, FakePhone: 6}
	for _, sig := range Signals {
		st := d[sig]
		if !st.Enabled || st.Threshold != want[sig] || st.Keywords != nil {
			t.Errorf("Defaults()[%s] = %+v; want enabled, threshold %v, no keywords", sig, st, want[sig])
		}
	}
	if p := d.Validate(); p != nil {
		t.Errorf("Defaults().Validate() = %v; want nil", p)
	}
}

func TestWith(t *testing.T) {
	var stored Settings
	if err := json.Unmarshal([]byte(`{"too_fast":{"enabled":false},"duplicate":{"enabled":true,"threshold":30},
		"vendor_pitch":{"enabled":true,"keywords":["roof"]}}`), &stored); err != nil {
		t.Fatal(err)
	}
	got := stored.With(Defaults())
	want := Defaults()
	want[TooFast] = Setting{}
	want[Duplicate] = Setting{Enabled: true, Threshold: 30}
	want[VendorPitch] = Setting{Enabled: true, Keywords: []string{"roof"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stored.With(Defaults()) = %v; want %v", got, want)
	}
	if len(stored) != 3 {
		t.Errorf("With changed its receiver: %v", stored)
	}
	got[VendorPitch].Keywords[0] = "changed"
	if stored[VendorPitch].Keywords[0] != "roof" {
		t.Errorf("With shares keyword slices with its receiver")
	}
	if got := Settings(nil).With(Defaults()); !reflect.DeepEqual(got, Defaults()) {
		t.Errorf("nil.With(Defaults()) = %v; want %v", got, Defaults())
	}
	if got := Defaults().With(nil); !reflect.DeepEqual(got, Defaults()) {
		t.Errorf("Defaults().With(nil) = %v; want %v", got, Defaults())
	}
}

func TestValidate(t *testing.T) {
	many := make([]string, 501)
	for i := range many {
		many[i] = "phrase"
	}
	tests := []struct {
		name string
		sig  Signal
		st   Setting
		want string // "" when valid
	}{
		{"too_fast default", TooFast, Setting{Enabled: true}, ""},
		{"too_fast 10 s", TooFast, Setting{Threshold: 10}, ""},
		{"too_fast negative", TooFast, Setting{Threshold: -1}, "threshold must not be negative"},
		{"too_fast absurd", TooFast, Setting{Threshold: 3600}, "threshold must be at most 60 seconds"},
		{"too_fast NaN", TooFast, Setting{Threshold: math.NaN()}, "threshold must be a number"},
		{"duplicate 30 days", Duplicate, Setting{Threshold: 30}, ""},
		{"duplicate absurd", Duplicate, Setting{Threshold: 1000}, "threshold must be at most 365 days"},
		{"fake_phone 8 digits", FakePhone, Setting{Threshold: 8}, ""},
		{"fake_phone fraction", FakePhone, Setting{Threshold: 6.5}, "threshold must be a whole number of digits"},
		{"fake_phone absurd", FakePhone, Setting{Threshold: 20}, "threshold must be at most 15 digits"},
		{"honeypot threshold", Honeypot, Setting{Threshold: 3}, "this signal has no threshold"},
		{"keywords ok", VendorPitch, Setting{Keywords: []string{"seo services", "bewerbung*"}}, ""},
		{"keywords on job_application", JobApplication, Setting{Keywords: []string{"my cv"}}, ""},
		{"keywords on bad_email", BadEmail, Setting{Keywords: []string{"x"}}, "this signal takes no keywords"},
		{"empty keyword", VendorPitch, Setting{Keywords: []string{"seo", "  "}}, "keyword 2 is empty"},
		{"punctuation keyword", VendorPitch, Setting{Keywords: []string{"!!!"}}, `keyword "!!!" has no letters or digits`},
		{"long keyword", JobApplication, Setting{Keywords: []string{strings.Repeat("é", 101)}}, "keyword 1 is longer than 100 characters"},
		{"100 characters", JobApplication, Setting{Keywords: []string{strings.Repeat("é", 100)}}, ""},
		{"too many keywords", VendorPitch, Setting{Keywords: many}, "at most 500 keywords, got 501"},
		{"two problems", Duplicate, Setting{Threshold: -1, Keywords: []string{"x"}}, "threshold must not be negative; this signal takes no keywords"},
		{"unknown signal", Signal("spam"), Setting{}, `unknown junk signal "spam"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Defaults()
			s[tt.sig] = tt.st
			got := s.Validate()
			var want map[Signal]string
			if tt.want != "" {
				want = map[Signal]string{tt.sig: tt.want}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Validate(%s: %+v) = %v; want %v", tt.sig, tt.st, got, want)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	labels := map[string]bool{}
	for _, sig := range Signals {
		label, help := Describe(sig)
		if label == "" || help == "" || !strings.HasSuffix(help, ".") || labels[label] {
			t.Errorf("Describe(%q) = %q, %q; want a unique label and a sentence", sig, label, help)
		}
		labels[label] = true
	}
	if label, help := Describe("spam"); label != "spam" || help != "" {
		t.Errorf("Describe(%q) = %q, %q; want %q, %q", "spam", label, help, "spam", "")
	}
}

func TestReasonJSON(t *testing.T) {
	b, err := json.Marshal(Reason{Signal: TooFast, Message: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"signal":"too_fast","message":"m"}`; got != want {
		t.Errorf("json.Marshal(Reason) = %s; want %s", got, want)
	}
}

func FuzzCheck(f *testing.F) {
	f.Add(0.5, true, "bot", "1111111111", "1111111111", "x@mailinator.com", "seo services", true)
	f.Add(12.0, false, "", "+1 (212) 555-0123", "", "Jane@@Example..com", "Bewerbung", false)
	f.Add(-1.0, true, "", "4915123456789", "15123456789", "ayşe@örnek.com.tr", "İŞ BAŞVURUSU ÖZGEÇMİŞ", false)
	f.Add(math.NaN(), true, "\x00", "\xff\xfe", "12", "@", "\u0301\u0307ı", false)
	f.Fuzz(func(t *testing.T, seconds float64, hasSeconds bool, honeypot, phone, national, email, message string, dup bool) {
		in := Input{Honeypot: honeypot, Phone: phone, PhoneNational: national, Email: email, Message: message, Duplicate: dup}
		if hasSeconds {
			in.FillSeconds = &seconds
		}
		s := Defaults()
		s[VendorPitch] = Setting{Enabled: true, Keywords: []string{message, honeypot + "*"}}
		for _, settings := range []Settings{Defaults(), s, nil} {
			got := Check(in, settings)
			last := -1
			for _, r := range got {
				i := slices.Index(Signals, r.Signal)
				if i <= last || r.Message == "" {
					t.Fatalf("Check(%+v) = %v: out of order, repeated or empty", in, got)
				}
				last = i
			}
		}
		_ = s.Validate()
	})
}
