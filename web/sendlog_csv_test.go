package web_test

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// readCSV parses a CSV download into records by column name.
func readCSV(t *testing.T, r resp) []map[string]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(r.body)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("csv: %v\n%s", err, r.body)
	}
	var out []map[string]string
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, col := range recs[0] {
			m[col] = rec[i]
		}
		out = append(out, m)
	}
	return out
}

func mustQuery(q string) url.Values {
	v, _ := url.ParseQuery(q)
	return v
}

// The send log's Download CSV holds exactly the rows the page lists under
// its filters (the Overview's lead filters too), newest first, with the
// time shown, the lead as the page names it and the status in words; a
// value that a spreadsheet would run as a formula is written as text. It
// is for editors and up, of their own accounts only, and it is written as
// it is read: a long file goes out in chunks, with no length known ahead.
func TestSendLogCSV(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		f.acc.Timezone = "Europe/Berlin"
		if _, err := s.UpdateAccountSettings(t.Context(), f.acc); err != nil {
			t.Fatal(err)
		}
		postRuleLeads(t, f)
		formula := f.a.postLead(f.key, ruleLead(7, "gus@acme-roofing.com", "Paris", "100", "2026-12-01T09:00:00Z",
			map[string]any{"first_name": `=HYPERLINK("http://evil.example","x")`, "last_name": "Grey"}))
		if formula.status != http.StatusCreated {
			t.Fatalf("lead: %d %s", formula.status, formula.raw)
		}
		berlin := createRuleForm(t, f, ruleValues("Big Berlin", f.d, "automatic_match", "QualifiedLead", "and", [3]string{"city", "equals", "berlin"}))
		wantStatus(t, "apply", f.b.post(f.url("/"+itoa(berlin.ID)+"/apply"), url.Values{"confirm": {"yes"}}), http.StatusSeeOther)

		log := views.AccountURL(f.acc.ID, "/events")
		for _, q := range []string{"", "event=Lead", "event=QualifiedLead", "event=NoSuchEvent", "status=queued&event=Lead",
			"source=website&lead_from=2026-11-29&lead_to=2026-12-01", "campaign=nothing-like-it"} {
			page := f.b.get(log + "?" + q)
			wantStatus(t, "send log "+q, page, http.StatusOK)
			rows := readSendLog(page)
			link, ok := page.doc.Find(`[data-testid="events-csv-link"]`).Attr("href")
			if len(rows) == 0 {
				if ok {
					t.Errorf("%q: a CSV link beside no event", q)
				}
				link = views.AccountURL(f.acc.ID, "/events.csv?"+q)
			} else if u, err := url.Parse(link); err != nil || u.Path != views.AccountURL(f.acc.ID, "/events.csv") || u.Query().Encode() != mustQuery(q).Encode() {
				t.Errorf("%q: CSV link %q; want /events.csv with the page's filters", q, link)
			}
			res := f.b.get(link)
			wantStatus(t, "csv "+q, res, http.StatusOK)
			if ct, cd := res.header.Get("Content-Type"), res.header.Get("Content-Disposition"); !strings.HasPrefix(ct, "text/csv") || !strings.Contains(cd, "attachment") {
				t.Errorf("%q: Content-Type %q, Content-Disposition %q; want a CSV attachment", q, ct, cd)
			}
			recs := readCSV(t, res)
			if len(recs) != len(rows) {
				t.Fatalf("%q: %d CSV rows; the page lists %d", q, len(recs), len(rows))
			}
			for i, r := range rows {
				c := recs[i]
				shown, _ := time.Parse(time.RFC3339, r.queued)
				queued, err := time.Parse(time.RFC3339, c["queued_at"])
				lead := strings.TrimPrefix(c["lead"], "'")
				if err != nil || !queued.Equal(shown.Truncate(time.Second)) || !strings.HasSuffix(c["queued_at"], "+01:00") ||
					c["event_name"] != r.event || lead != r.lead || c["status"] != r.status ||
					r.leadHref != views.AccountURL(f.acc.ID, "/leads/"+c["lead_id"]) {
					t.Errorf("%q row %d: CSV %v; the page shows %+v (times in the account's zone, Europe/Berlin)", q, i, c, r)
				}
			}
		}

		all := readCSV(t, f.b.get(views.AccountURL(f.acc.ID, "/events.csv")))
		var gus map[string]string
		for _, c := range all {
			if c["lead_id"] == itoa(formula.LeadID) {
				gus = c
			}
			if c["event_name"] == "QualifiedLead" && c["made_by"] != "rule Big Berlin" {
				t.Errorf("QualifiedLead made by %q; want rule Big Berlin", c["made_by"])
			}
		}
		if want := `'=HYPERLINK("http://evil.example","x") Grey`; gus == nil || gus["lead"] != want {
			t.Errorf("the formula lead's row %v; want lead %q, text to a spreadsheet", gus, want)
		}

		// Viewers do not see the send log, nor its CSV; another account's
		// answers 404.
		viewer := f.a.user("viewer@example.com", false)
		if err := s.SetMember(t.Context(), f.acc.ID, viewer.ID, models.RoleViewer); err != nil {
			t.Fatal(err)
		}
		vb := f.a.browser()
		vb.login("viewer@example.com")
		wantStatus(t, "a viewer's CSV", vb.get(views.AccountURL(f.acc.ID, "/events.csv")), http.StatusForbidden)
		other := f.a.user("other@example.com", false)
		f.a.account("other", other)
		ob := f.a.browser()
		ob.login("other@example.com")
		wantStatus(t, "another account's CSV", ob.get(views.AccountURL(f.acc.ID, "/events.csv")), http.StatusNotFound)

		// A long file is written as it is read.
		for i := range 40 {
			body := ruleLead(100+i, fmt.Sprintf("more%d@acme-roofing.com", i), "Paris", "100", "2026-12-01T10:00:00Z", nil)
			if r := f.a.postLead(f.key, body); r.status != http.StatusCreated {
				t.Fatalf("lead %d: %d %s", i, r.status, r.raw)
			}
		}
		long := f.b.get(views.AccountURL(f.acc.ID, "/events.csv"))
		if n := len(readCSV(t, long)); n != len(all)+40 || len(long.body) < 8<<10 {
			t.Fatalf("%d rows in %d bytes; want %d, in more than 8 KiB", n, len(long.body), len(all)+40)
		}
		if cl := long.header.Get("Content-Length"); cl != "" {
			t.Errorf("Content-Length %s: the file was held whole before it was sent", cl)
		}
	})
}
