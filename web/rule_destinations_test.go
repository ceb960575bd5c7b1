package web_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestRuleSeveralDestinations: the rule form ticks several destinations;
// the rule is saved with them in order, listed and previewed with each,
// and a lead it matches gets one event at each, under each destination's
// own id. Ticking none, or another account's, is refused inline with what
// was typed kept; the change shows in the rule's history. A stage mapping
// does the same for a stage change.
func TestRuleSeveralDestinations(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		ctx := t.Context()
		tiktok := models.Dataset{AccountID: f.acc.ID, Kind: models.KindTikTok, Name: "TikTok", PixelID: "C4TIKTOK1234", EventSource: "web",
			Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &tiktok); err != nil {
			t.Fatal(err)
		}
		otherAcc, _ := f.a.ingestAccount("other", "US")
		other := models.Dataset{AccountID: otherAcc.ID, Name: "Theirs", PixelID: "999999999999999", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &other); err != nil {
			t.Fatal(err)
		}

		form := f.b.get(f.url("/new"))
		boxes := form.doc.Find(`fieldset#f-dataset_id input[type="checkbox"][name="dataset_id"]`)
		if boxes.Length() != 2 || !boxes.First().Is(":checked") || boxes.Last().Is(":checked") {
			t.Fatalf("the new rule form offers %d destination boxes; want Main (ticked) and TikTok", boxes.Length())
		}

		v := ruleValues("Qualified everywhere", f.d, "automatic_match", "QualifiedLead", "and", [3]string{"city", "equals", "berlin"})
		v.Del("dataset_id")
		r := f.b.post(f.url(""), v)
		wantStatus(t, "a rule with no destination", r, http.StatusUnprocessableEntity)
		if r.text("error-dataset_id") != "Choose at least one destination." || r.inputValue("name") != "Qualified everywhere" {
			t.Errorf("error %q, name %q; want the destinations' error with the name kept", r.text("error-dataset_id"), r.inputValue("name"))
		}
		v["dataset_id"] = []string{itoa(f.d.ID), itoa(other.ID)}
		r = f.b.post(f.url(""), v)
		wantStatus(t, "a rule naming another account's destination", r, http.StatusUnprocessableEntity)
		if r.text("error-dataset_id") != "Choose among this account's destinations." {
			t.Errorf("error %q", r.text("error-dataset_id"))
		}
		if ticked := r.doc.Find(`input[name="dataset_id"]:checked`); ticked.Length() != 1 || ticked.AttrOr("value", "") != itoa(f.d.ID) {
			t.Errorf("after the error %d boxes are ticked; want Main's, as it was", ticked.Length())
		}

		v.Del("dataset_id")
		if got := f.b.post(f.url("/preview"), v).text("preview-sendable"); !strings.Contains(got, "No destination is ticked") {
			t.Errorf("the preview with no destination ticked says %q; want it to say so", got)
		}
		v["dataset_id"] = []string{itoa(f.d.ID), itoa(tiktok.ID)}
		pv := f.b.post(f.url("/preview"), v)
		var sends []string
		pv.doc.Find(`[data-testid="preview-sendable"]`).Each(func(_ int, li *goquery.Selection) {
			sends = append(sends, strings.Join(strings.Fields(li.Text()), " "))
		})
		if len(sends) != 2 || !strings.Contains(sends[0], "to Main now") || !strings.Contains(sends[1], "to TikTok (TikTok) now") {
			t.Errorf("the preview's sendable lines = %q; want one for Main, then one for TikTok", sends)
		}

		r = f.b.post(f.url(""), v)
		wantStatus(t, "a rule of two destinations", r, http.StatusSeeOther)
		rules, err := s.SendRules(ctx, f.acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(rules, func(r models.SendRule) bool { return r.Name == "Qualified everywhere" })
		if i < 0 || !slices.Equal(rules[i].Destinations(), []int64{f.d.ID, tiktok.ID}) {
			t.Fatalf("stored rules = %+v; want Qualified everywhere to Main then TikTok", rules)
		}
		saved := rules[i]
		list := f.b.get(f.url(""))
		var where []string
		list.doc.Find(`[data-testid="rule-dataset"]`).Each(func(_ int, s *goquery.Selection) { where = append(where, s.Text()) })
		if !slices.Contains(where, "Main, TikTok (TikTok)") {
			t.Errorf("the rules list's destinations = %q; want \"Main, TikTok (TikTok)\"", where)
		}
		page := f.b.get(f.url("/" + itoa(saved.ID)))
		if page.doc.Find(`input[name="dataset_id"]:checked`).Length() != 2 {
			t.Error("the saved rule's page does not tick both destinations")
		}

		lead := f.a.postLead(f.key, ruleLead(1, "ann@example.com", "berlin", "100", f.a.clock().Format(time.RFC3339), nil))
		if lead.status != http.StatusCreated {
			t.Fatalf("post lead = %d", lead.status)
		}
		evs, err := s.LeadEvents(ctx, f.acc.ID, lead.LeadID)
		if err != nil {
			t.Fatal(err)
		}
		got := map[int64]string{}
		for _, e := range evs {
			if e.EventName == "QualifiedLead" {
				got[e.DatasetID] = e.EventID
			}
		}
		if len(got) != 2 || got[f.d.ID] == "" || got[tiktok.ID] == "" || got[f.d.ID] == got[tiktok.ID] {
			t.Errorf("the lead's QualifiedLead events by destination = %v; want one at each, with its own id", got)
		}

		// Applying it to recent leads counts an event per destination.
		apply := f.b.get(f.url("/" + itoa(saved.ID) + "/apply"))
		if msg := strings.Join(strings.Fields(apply.doc.Find("main").Text()), " "); !strings.Contains(msg,
			"1 lead of the last 7 days matches this rule as they are now: 2 QualifiedLead events, one for each destination, of which 2 are stored already") {
			t.Errorf("the apply page says %q; want the count of events per destination", msg)
		}

		// One destination fewer: the history says so.
		v["dataset_id"] = []string{itoa(tiktok.ID)}
		r = f.b.post(f.url("/"+itoa(saved.ID)), v)
		wantStatus(t, "saving with TikTok alone", r, http.StatusSeeOther)
		page = f.b.get(f.url("/" + itoa(saved.ID)))
		var change string
		page.doc.Find(`tr[data-testid="rule-change"]`).EachWithBreak(func(_ int, tr *goquery.Selection) bool {
			if strings.TrimSpace(tr.Find("th").Text()) == "Destinations" {
				change = strings.TrimSpace(tr.Find("del").Text()) + " → " + strings.TrimSpace(tr.Find("ins").Text())
				return false
			}
			return true
		})
		if change != "Main, TikTok (TikTok) → TikTok (TikTok)" {
			t.Errorf("the history's destinations change = %q; want Main, TikTok (TikTok) → TikTok (TikTok)", change)
		}

		// A stage mapping names both as well.
		mv := mappingValues("won", f.d, "Purchase", "fixed")
		mv.Set("value", "90")
		mv.Set("currency_mode", "fixed")
		mv.Set("currency", "USD")
		mv["dataset_id"] = []string{itoa(tiktok.ID), itoa(f.d.ID)}
		r = f.b.post(stagesURL(f.acc, "/mappings"), mv)
		wantStatus(t, "a mapping of two destinations", r, http.StatusSeeOther)
		lines := mappingLines(f.b.get(stagesURL(f.acc, "")), "won")
		if len(lines) != 1 || !strings.Contains(lines[0], "Main, TikTok (TikTok)") {
			t.Errorf("won's mapping lines = %q; want one naming Main and TikTok, as the destinations are listed", lines)
		}
		st := f.a.postStage(f.key, fmt.Sprintf(`{"lead":{"external_id":"rule-lead-1"},"stage":"won","occurred_at":%q}`,
			f.a.clock().Format(time.RFC3339)))
		if st.status != http.StatusCreated {
			t.Fatalf("post stage = %d %s", st.status, st.raw)
		}
		evs, _ = s.LeadEvents(ctx, f.acc.ID, lead.LeadID)
		purchases := map[int64]bool{}
		for _, e := range evs {
			if e.EventName == "Purchase" {
				purchases[e.DatasetID] = true
			}
		}
		if len(purchases) != 2 || !purchases[f.d.ID] || !purchases[tiktok.ID] {
			t.Errorf("Purchase events at %v; want one at Main and one at TikTok", purchases)
		}
	})
}
