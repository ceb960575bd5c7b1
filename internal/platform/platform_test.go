package platform_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/models"
)

func TestParseEventNames(t *testing.T) {
	tests := []struct {
		name, text, want, problem string
	}{
		{"none", " \n\n", "", ""},
		{"two, spaces around", " QualifiedLead = ApplicationApproval \nPurchase=CompletePayment\n", `{"Purchase":"CompletePayment","QualifiedLead":"ApplicationApproval"}`, ""},
		{"no equals", "Lead ApplicationApproval", "", "line 1: write it as Ours = Theirs"},
		{"empty theirs", "Lead =", "", "line 1: write it as Ours = Theirs"},
		{"twice", "Lead = a\nLead = b", "", "line 2: Lead is named twice"},
		{"bad ours", "Le@d = a", "", "line 1:"},
		{"control character", "Lead = a\x00b", "", "printable"},
		{"too long", "Lead = " + strings.Repeat("x", platform.MaxOwnName+1), "", "1 to 100 printable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := platform.ParseEventNames(models.KindTikTok, tt.text)
			switch {
			case tt.problem == "" && (err != nil || got != tt.want):
				t.Errorf("ParseEventNames(%q) = %q, %v; want %q", tt.text, got, err, tt.want)
			case tt.problem != "" && (err == nil || !strings.Contains(err.Error(), tt.problem)):
				t.Errorf("ParseEventNames(%q) error = %v; want one saying %q", tt.text, err, tt.problem)
			}
		})
	}
	var many strings.Builder
	for i := range platform.MaxEventNames + 1 {
		many.WriteString("Custom" + strings.Repeat("x", i%5) + string(rune('A'+i%26)) + string(rune('a'+i/26)) + " = y\n")
	}
	if _, err := platform.ParseEventNames(models.KindTikTok, many.String()); err == nil {
		t.Errorf("%d names: no error; want the limit", platform.MaxEventNames+1)
	}
	for _, tt := range []struct {
		text, problem string
	}{
		{"Lead = 123 456", "not a conversion action id"},
		{"Lead = abc", "not a conversion action id"},
		{strings.Repeat("Custom", 0) + "A = 1\nB = 2\nC = 3\nD = 4\nE = 5\nF = 6\nG = 7\nH = 8\nI = 9\nJ = 10\nK = 11", "at most 10"},
	} {
		if _, err := platform.ParseEventNames(models.KindGoogle, tt.text); err == nil || !strings.Contains(err.Error(), tt.problem) {
			t.Errorf("Google's ParseEventNames(%q) = %v; want %q", tt.text, err, tt.problem)
		}
	}
	if got, err := platform.EventNamesJSON(models.KindGoogle, map[string]string{"Lead": " 123 "}); err != nil || got != `{"Lead":"123"}` {
		t.Errorf("EventNamesJSON trims: %q, %v", got, err)
	}
	if got := platform.EventNamesText(`{"QualifiedLead":"ApplicationApproval","Lead":"SubmitForm"}`); got != "Lead = SubmitForm\nQualifiedLead = ApplicationApproval\n" {
		t.Errorf("EventNamesText = %q", got)
	}
}

func TestEventName(t *testing.T) {
	own := `{"QualifiedLead":"ApplicationApproval"}`
	tests := []struct {
		d          models.Dataset
		ours, want string
	}{
		{models.Dataset{}, "QualifiedLead", "QualifiedLead"},
		{models.Dataset{Kind: models.KindMeta, EventNames: own}, "QualifiedLead", "QualifiedLead"},
		{models.Dataset{Kind: models.KindTikTok, EventNames: own}, "QualifiedLead", "ApplicationApproval"},
		{models.Dataset{Kind: models.KindTikTok}, "SubmitApplication", "ApplicationApproval"},
		{models.Dataset{Kind: models.KindPinterest}, "Purchase", "checkout"},
		{models.Dataset{Kind: models.KindPinterest}, "QualifiedLead", "custom"},
		{models.Dataset{Kind: models.KindGoogle, EventNames: `{"Lead":"123"}`}, "Lead", "123"},
		{models.Dataset{Kind: models.KindGoogle, EventNames: `{"Lead":"123"}`}, "Purchase", ""},
	}
	for _, tt := range tests {
		if got := platform.EventName(tt.d, tt.ours); got != tt.want {
			t.Errorf("EventName(%s %s, %q) = %q; want %q", tt.d.Kind, tt.d.EventNames, tt.ours, got, tt.want)
		}
	}
}

// TestStamp: a prepared payload is built again when its destination's
// kind or own event names change, and Meta's stamp stays capi's.
func TestStamp(t *testing.T) {
	acc := models.Account{Currency: "USD"}
	meta := models.Dataset{Kind: models.KindMeta, LDU: models.LDUOff}
	if platform.Stamp(acc, meta) != capi.Stamp(acc, meta) {
		t.Error("Meta's stamp is not capi's")
	}
	tt := models.Dataset{Kind: models.KindTikTok, LDU: models.LDUOff}
	named := tt
	named.EventNames = `{"Lead":"SubmitForm"}`
	stamps := map[int64]string{}
	for name, d := range map[string]models.Dataset{"meta": meta, "tiktok": tt, "tiktok named": named} {
		s := platform.Stamp(acc, d)
		if other, dup := stamps[s]; dup || s == 0 {
			t.Errorf("stamp of %s = %d, as %s's", name, s, other)
		}
		stamps[s] = name
	}
}

// TestPrepareByKind: each kind's JSON is its platform's, and a Google
// event without a conversion action is held back with the reason.
func TestPrepareByKind(t *testing.T) {
	keys := normalize.Normalize(normalize.Input{Email: "a@example.com", DefaultCountry: "US"})
	in := capi.BuildInput{Keys: keys, Lead: models.Lead{Source: models.SourceCRM},
		Event: models.Event{EventName: "Lead", EventID: "e1", EventTime: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}}
	for kind, want := range map[models.Kind]string{models.KindMeta: `"event_name":"Lead"`, models.KindTikTok: `"event":"Lead"`,
		models.KindPinterest: `"event_name":"lead"`} {
		in.Dataset = models.Dataset{Kind: kind, LDU: models.LDUOff}
		body, err := platform.Prepare(in)
		if err != nil || !strings.Contains(string(body), want) {
			t.Errorf("Prepare for %s = %s, %v; want %s", kind, body, err, want)
		}
	}
	in.Dataset = models.Dataset{Kind: models.KindGoogle}
	var inv *capi.Invalid
	if _, err := platform.Prepare(in); !errors.As(err, &inv) || !strings.Contains(inv.Reason, "Lead") {
		t.Errorf("Google without an action: %v; want held back naming Lead", err)
	}
	if err := platform.Check(in); err == nil {
		t.Error("Check lets a Google event without an action through")
	}
}
