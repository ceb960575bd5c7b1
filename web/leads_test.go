package web_test

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

func TestLeadsPages(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		viewer := a.user("vic@example.com", false)
		// An editor: the leads CSV with contact data, the stage buttons.
		if err := s.SetMember(t.Context(), acc.ID, viewer.ID, models.RoleEditor); err != nil {
			t.Fatal(err)
		}
		b := a.browser()
		b.login("vic@example.com")
		base := views.AccountURL(acc.ID, "")

		r := b.get(base + "/leads")
		wantStatus(t, "empty leads", r, http.StatusOK)
		if !r.has("leads-empty") || !strings.Contains(r.text("curl-example"), "/api/v1/leads") {
			t.Error("the empty state should show the curl line to post a first lead")
		}

		good := a.postLead(key, goodLead)
		for i := range 55 {
			a.postLead(key, fmt.Sprintf(`{"email":"user%02d@example.com","created_at":"2026-11-30T%02d:%02d:00Z"}`, i, i/60, i%60))
		}
		bot := a.postLead(key, `{"email":"bot@example.com","honeypot":"x","created_at":"2026-11-29T10:00:00Z","source":"crm"}`)

		r = b.get(base + "/leads")
		rows := r.doc.Find(`[data-testid="lead-row"]`).Length()
		if rows != 50 || r.text("leads-total") != "57 leads match" {
			t.Fatalf("first page has %d rows, total %q; want 50 of 57", rows, r.text("leads-total"))
		}
		if first := r.doc.Find(`[data-testid="lead-row"]`).First().Text(); !strings.Contains(first, "jane.doe@example.com") && !strings.Contains(first, "Jane.Doe@Example.COM") {
			t.Errorf("newest lead first: got %q", first)
		}
		next, ok := r.doc.Find(`[data-testid="load-more"]`).Attr("hx-get")
		if !ok {
			t.Fatal("no load-more link")
		}
		more := b.getWith(next, http.Header{"Hx-Request": {"true"}})
		// A bare <tr> fragment is what htmx swaps in; an HTML parser would
		// drop rows outside a table, so count them in the text.
		if n := strings.Count(more.body, `data-testid="lead-row"`); n != 7 || strings.Contains(more.body, "<html") {
			t.Errorf("second page: %d rows (fragment: %v); want 7 rows as a fragment", n, !strings.Contains(more.body, "<html"))
		}

		r = b.get(base + "/leads?junk=junk")
		if n := r.doc.Find(`[data-testid="lead-row"]`).Length(); n != 1 {
			t.Errorf("junk filter shows %d rows; want 1", n)
		}
		if v, _ := r.doc.Find(`select[name="junk"] option[selected]`).Attr("value"); v != "junk" {
			t.Errorf("junk filter not kept in the form: %q", v)
		}
		r = b.get(base + "/leads?source=crm&from=2026-11-29&to=2026-11-29")
		if n := r.doc.Find(`[data-testid="lead-row"]`).Length(); n != 1 {
			t.Errorf("source+date filter shows %d rows; want 1", n)
		}
		r = b.get(base + "/leads?q=415+692")
		if n := r.doc.Find(`[data-testid="lead-row"]`).Length(); n != 1 {
			t.Errorf("phone search shows %d rows; want 1", n)
		}
		r = b.get(base + "/leads?q=+User07@Example.com+")
		if n := r.doc.Find(`[data-testid="lead-row"]`).Length(); n != 1 || !strings.Contains(r.body, "user07@example.com") {
			t.Errorf("whole email search shows %d rows; want user07 alone", n)
		}
		if v, _ := r.doc.Find(`input[name="q"]`).Attr("value"); v != "User07@Example.com" {
			t.Errorf("search box keeps %q; want what was typed", v)
		}
		r = b.get(base + "/leads?q=user0")
		if n := r.doc.Find(`[data-testid="lead-row"]`).Length(); n != 10 {
			t.Errorf("part of an email shows %d rows; want user00 to user09", n)
		}
		// The filter bar's answer is the #results it swaps in: the error,
		// the count, the rows.
		r = b.getWith(base+"/leads?from=yesterday", http.Header{"Hx-Request": {"true"}})
		if got := r.doc.Find(`#results [data-testid="filter-error"]`).Text(); !strings.Contains(got, "YYYY-MM-DD") {
			t.Errorf("an unreadable date says %q in the results; want it explained", got)
		}
		if v, _ := r.doc.Find(`[data-testid="lead-filters"] input[name="from"]`).Attr("value"); v != "yesterday" {
			t.Errorf("the From box keeps %q; want what was typed", v)
		}
		r = b.getWith(base+"/leads?junk=junk", http.Header{"Hx-Request": {"true"}})
		if n := r.doc.Find(`#results [data-testid="lead-row"]`).Length(); n != 1 || r.doc.Find(`#results [data-testid="leads-total"]`).Text() != "1 lead matches" {
			t.Errorf("the junk filter's results: %d rows, %q", n, r.doc.Find(`#results [data-testid="leads-total"]`).Text())
		}
		// From the Overview: the leads that reached a stage, said above the
		// filters with a way to clear them, kept as the filters change.
		r = b.get(base + "/leads?reached=qualified&campaign=spring%20sale")
		note := strings.Join(strings.Fields(r.text("lead-filter-note")), " ")
		if !strings.Contains(note, "Leads that reached qualified") || !strings.Contains(note, "Campaign spring sale") || !strings.Contains(note, "Clear all filters") {
			t.Errorf("filter note = %q", note)
		}
		if v, _ := r.doc.Find(`[data-testid="lead-filters"] input[type="hidden"][name="reached"]`).Attr("value"); v != "qualified" {
			t.Errorf("the reached filter is not kept in the bar: %q", v)
		}

		r = b.get(base + "/leads?junk=junk")
		if csvURL, _ := r.doc.Find(`[data-testid="csv-link"]`).Attr("href"); !strings.Contains(csvURL, "junk=junk") {
			t.Errorf("CSV link %q; want the filter carried over", csvURL)
		}
		res := b.get(base + "/leads.csv?junk=junk")
		if !strings.HasPrefix(res.header.Get("Content-Type"), "text/csv") {
			t.Errorf("CSV content type %q", res.header.Get("Content-Type"))
		}
		recs, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
		if err != nil || len(recs) != 2 || recs[1][5] != "bot@example.com" || recs[1][15] != "honeypot" {
			t.Errorf("junk CSV = %v, %v; want header and the bot", recs, err)
		}

		// Lead page: normalised keys with hashes, missing keys, history.
		lp := fmt.Sprintf("%s/leads/%d", base, good.LeadID)
		r = b.get(lp)
		wantStatus(t, "lead page", r, http.StatusOK)
		if !strings.Contains(r.text("match-keys"), "14156924281") || !strings.Contains(r.text("match-keys"), "ca") {
			t.Errorf("match keys table: %q", r.text("match-keys"))
		}
		if !strings.Contains(r.text("missing-keys"), "fbp") {
			t.Errorf("missing keys = %q; want fbp listed", r.text("missing-keys"))
		}
		// Who they are and what they wrote come first, with human labels.
		if got := r.text("lead-message"); got != "Need a quote for a new roof" {
			t.Errorf("message = %q", got)
		}
		if person := r.text("person"); !strings.Contains(person, "Jane Doe") || !strings.Contains(person, "(415) 692-4281") ||
			!strings.Contains(person, "Budget") || !strings.Contains(person, "Website") {
			t.Errorf("person section = %q; want name, phone, the budget field and the source", person)
		}
		if raw := r.text("raw-fields"); !strings.Contains(raw, "First name") || strings.Contains(raw, "first_name") {
			t.Errorf("raw fields = %q; want human labels", raw)
		}
		if i, j := strings.Index(r.body, `data-testid="person"`), strings.Index(r.body, `data-testid="keys"`); i < 0 || j < i {
			t.Error("the match keys should come after the person")
		}

		// A viewer marks it junk, then not junk, then won with a value.
		r = b.post(lp+"/stages", url.Values{"stage": {"junk"}})
		wantStatus(t, "mark junk", r, http.StatusSeeOther)
		l, _ := s.Lead(t.Context(), acc.ID, good.LeadID)
		if !l.Junk || l.JunkOverride != "junk" {
			t.Errorf("after mark junk: junk %v override %q", l.Junk, l.JunkOverride)
		}
		b.post(lp+"/stages", url.Values{"stage": {"not_junk"}})
		// Won sends a Purchase with the deal's value: it needs one.
		d := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(t.Context(), &d); err != nil {
			t.Fatal(err)
		}
		won := models.SendRule{AccountID: acc.ID, DatasetID: d.ID, Name: "won to Purchase", Mode: "stage", Stage: models.StageWon,
			EventName: "Purchase", ValueField: models.StageValueFromChange, Combinator: "and", Conditions: "[]", Enabled: true}
		if err := s.CreateSendRule(t.Context(), &won, nil); err != nil {
			t.Fatal(err)
		}
		r = b.post(lp+"/stages", url.Values{"stage": {"won"}, "value": {""}, "currency": {"usd"}})
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.text("error-value"), "Purchase") {
			t.Errorf("won without value = %d %q; want 422 with a value error naming the Purchase", r.status, r.text("error-value"))
		}
		r = b.post(lp+"/stages", url.Values{"stage": {"won"}, "value": {"1250.50"}, "currency": {"eur"}})
		wantStatus(t, "mark won", r, http.StatusSeeOther)
		r = b.get(lp)
		if msg := r.text("flash"); !strings.Contains(msg, "Queued Purchase.") {
			t.Errorf("message after marking won = %q; want it to name the Purchase queued", msg)
		}
		if r.text("lead-stage") != "won" || r.text("lead-junk") != "not junk" {
			t.Errorf("lead page stage %q junk %q", r.text("lead-stage"), r.text("lead-junk"))
		}
		hist := strings.Join(strings.Fields(r.text("timeline")), " ")
		if !strings.Contains(hist, "Stage: won 1250.50 EUR by vic@example.com") || !strings.Contains(hist, "Marked not junk by vic@example.com") {
			t.Errorf("history = %q", hist)
		}

		// Leads of another account are not found.
		other, otherKey := a.ingestAccount("beta", "DE")
		theirs := a.postLead(otherKey, `{"email":"x@example.com"}`)
		wantStatus(t, "other account's lead", b.get(fmt.Sprintf("%s/leads/%d", base, theirs.LeadID)), http.StatusNotFound)
		wantStatus(t, "other account's lead stage", b.post(fmt.Sprintf("%s/leads/%d/stages", base, theirs.LeadID), url.Values{"stage": {"junk"}}), http.StatusNotFound)
		if l, _ := s.Lead(t.Context(), other.ID, theirs.LeadID); l.Junk {
			t.Error("another account's lead was changed")
		}
		_ = bot
	})
}

func TestIngestKeysAndJunkSettingsPages(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		owner := a.user("ada@example.com", false)
		acc := a.account("acme", owner)
		b := a.browser()
		b.login("ada@example.com")
		base := views.AccountURL(acc.ID, "")

		r := b.post(base+"/keys", url.Values{"key_name": {""}})
		if r.status != http.StatusUnprocessableEntity || r.text("error-key_name") == "" {
			t.Errorf("empty key name = %d", r.status)
		}
		r = b.post(base+"/keys", url.Values{"key_name": {"Website"}})
		wantStatus(t, "create key", r, http.StatusSeeOther)
		r = b.get(base + "/settings/keys")
		secret := r.text("new-key-secret")
		if !strings.HasPrefix(secret, "lsk_") {
			t.Fatalf("new key secret = %q", secret)
		}
		ks, _ := s.IngestKeys(t.Context(), acc.ID)
		if len(ks) != 1 || ks[0].KeyHash != store.HashIngestKey(secret) || strings.Contains(ks[0].Prefix, secret) {
			t.Errorf("stored keys = %+v", ks)
		}
		if r.text("settings-flash") != "" {
			t.Error("the account form repeats the page's flash")
		}
		// Shown once: the settings page never shows it again.
		if r := b.get(base + "/settings/keys"); strings.Contains(r.body, secret) {
			t.Error("the settings page shows the key secret again")
		}
		if reply := a.postLead(secret, `{"email":"a@example.com"}`); reply.status != http.StatusCreated {
			t.Errorf("the new key does not work: %d", reply.status)
		}
		r = b.get(base + "/settings/keys")
		if strings.Contains(r.text("keys-table"), "never") {
			t.Errorf("last used not shown after use: %q", r.text("keys-table"))
		}
		r = b.post(fmt.Sprintf("%s/keys/%d/revoke", base, ks[0].ID), nil)
		wantStatus(t, "revoke", r, http.StatusSeeOther)
		if reply := a.postLead(secret, `{"email":"b@example.com"}`); reply.status != http.StatusUnauthorized {
			t.Errorf("revoked key answers %d; want 401", reply.status)
		}

		// Junk settings: a bad threshold keeps what was typed.
		form := url.Values{"enabled_too_fast": {"1"}, "threshold_too_fast": {"-3"}, "threshold_duplicate": {"7"}, "threshold_fake_phone": {"6"},
			"enabled_vendor_pitch": {"1"}, "keywords_vendor_pitch": {"seo services\nbacklinks"}}
		r = b.post(base+"/junk", form)
		if r.status != http.StatusUnprocessableEntity || r.text("error-threshold_too_fast") == "" || r.inputValue("threshold_too_fast") != "-3" {
			t.Errorf("bad threshold = %d %q %q", r.status, r.text("error-threshold_too_fast"), r.inputValue("threshold_too_fast"))
		}
		form.Set("threshold_too_fast", "5")
		r = b.post(base+"/junk", form)
		wantStatus(t, "save junk settings", r, http.StatusSeeOther)
		if r := b.get(base + "/settings/junk"); r.text("junk-saved") == "" {
			t.Error("no confirmation next to the junk form after saving")
		}
		got, _ := s.AccountBySlug(t.Context(), "acme")
		if !strings.Contains(got.JunkSettings, `"threshold":5`) || !strings.Contains(got.JunkSettings, "backlinks") || !strings.Contains(got.JunkSettings, `"honeypot":{"enabled":false`) {
			t.Errorf("stored junk settings = %s", got.JunkSettings)
		}
		_, key, _ := s.CreateIngestKey(t.Context(), acc.ID, "test")
		if reply := a.postLead(key, `{"email":"c@example.com","fill_seconds":3}`); strings.Join(reply.JunkReasons, ",") != "too_fast" {
			t.Errorf("threshold 5 s: 3 s fill gave %v", reply.JunkReasons)
		}
		if reply := a.postLead(key, `{"email":"d@example.com","honeypot":"x"}`); reply.Junk {
			t.Errorf("disabled honeypot fired: %v", reply.JunkReasons)
		}
	})
}

// The leads list links each lead by its name, or its email when it has
// none, and names the events made for it ("Sent as") with their statuses
// in words on hover; it reads only the account's own events, and another
// account's lead is not found.
func TestLeadsListSentAs(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		// A dataset brings its default rule, "Completed leads to Main": a
		// Lead event for each complete lead.
		d := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &d); err != nil {
			t.Fatal(err)
		}
		manual := models.SendRule{AccountID: acc.ID, DatasetID: d.ID, Name: "Hand picked", Mode: "manual", EventName: "Contact",
			Combinator: "and", Conditions: `[]`, Enabled: true}
		if err := s.CreateSendRule(ctx, &manual, nil); err != nil {
			t.Fatal(err)
		}
		jane := a.postLead(key, goodLead)
		solo := a.postLead(key, `{"email":"solo@example.com","partial":true,"created_at":"2026-12-01T11:00:00Z"}`)
		b := a.browser()
		b.login("acme-owner@example.com")
		base := views.AccountURL(acc.ID, "")
		wantStatus(t, "send Contact", b.post(fmt.Sprintf("%s/leads/%d/rules/%d/send", base, jane.LeadID, manual.ID), url.Values{}), http.StatusSeeOther)

		// Another account's lead, with its own Lead event.
		other, otherKey := a.ingestAccount("beta", "DE")
		od := models.Dataset{AccountID: other.ID, Name: "Theirs", PixelID: "223456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &od); err != nil {
			t.Fatal(err)
		}
		theirs := a.postLead(otherKey, `{"email":"x@example.com","first_name":"Xavier","created_at":"2026-12-01T11:30:00Z"}`)

		row := func(r resp, id int64) *goquery.Selection {
			t.Helper()
			var found *goquery.Selection
			r.doc.Find(`[data-testid="lead-row"]`).Each(func(_ int, tr *goquery.Selection) {
				if href, _ := tr.Find(`[data-testid="lead-link"]`).Attr("href"); href == fmt.Sprintf("%s/leads/%d", base, id) {
					found = tr
				}
			})
			if found == nil {
				t.Fatalf("no row links to lead %d in %q", id, r.text("leads-table"))
			}
			return found
		}
		r := b.get(base + "/leads")
		wantStatus(t, "leads list", r, http.StatusOK)
		if n := r.doc.Find(`[data-testid="lead-row"]`).Length(); n != 2 {
			t.Errorf("%d rows; want the account's 2 leads", n)
		}
		j := row(r, jane.LeadID)
		if got := strings.TrimSpace(j.Find(`[data-testid="lead-link"]`).Text()); got != "Jane Doe" {
			t.Errorf("Jane's link reads %q; want her name", got)
		}
		sentAs := j.Find(`[data-testid="sent-as"]`)
		title, _ := sentAs.Attr("title")
		if got := strings.TrimSpace(sentAs.Text()); got != "Lead, Contact" || title != "Lead, Contact: Lead Waiting; Contact Waiting" {
			t.Errorf("Jane's Sent as = %q (hover %q); want Lead, Contact, both waiting", got, title)
		}
		o := row(r, solo.LeadID)
		if got := strings.TrimSpace(o.Find(`[data-testid="lead-link"]`).Text()); got != "solo@example.com" {
			t.Errorf("a nameless lead's link reads %q; want its email", got)
		}
		if o.Find(`[data-testid="sent-as"]`).Length() != 0 || !strings.Contains(o.Text(), "partial") {
			t.Errorf("the partial lead's row %q; want a partial badge and no event", strings.Join(strings.Fields(o.Text()), " "))
		}

		// Sent: the dry-run dataset builds the events and sends nothing.
		a.drain()
		title, _ = row(b.get(base+"/leads"), jane.LeadID).Find(`[data-testid="sent-as"]`).Attr("title")
		if want := "Lead, Contact: Lead Dry run; Contact Dry run"; title != want {
			t.Errorf("after dispatch Sent as says %q; want %q", title, want)
		}

		// One account's events only, whatever lead ids are asked for.
		got, err := s.LeadsSentAs(ctx, acc.ID, []int64{jane.LeadID, theirs.LeadID}, a.clock())
		if err != nil || len(got[theirs.LeadID]) != 0 || len(got[jane.LeadID]) != 2 {
			t.Errorf("LeadsSentAs across accounts = %v, %v; want Jane's two events only", got, err)
		}
		if got, _ := s.LeadsSentAs(ctx, other.ID, []int64{theirs.LeadID}, a.clock()); len(got[theirs.LeadID]) != 1 {
			t.Errorf("the other account's own lead's events = %v; want its Lead", got)
		}
		wantStatus(t, "another account's lead page", b.get(fmt.Sprintf("%s/leads/%d", base, theirs.LeadID)), http.StatusNotFound)
	})
}
