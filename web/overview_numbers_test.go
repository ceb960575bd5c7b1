package web_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// The Overview's headline numbers are exact in the account's zone (a lead
// a second before Monday 00:00 in New York is last week's, though it is
// Monday in UTC), and each is a link to exactly the rows it counts: the
// leads list or the send log shows as many rows as the number says.
func TestOverviewNumbersAreExactAndLinked(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s) // a lead at Sunday Nov 29, 07:00 in New York
		acc := st.acc
		acc.Timezone = "America/New_York"
		if _, err := s.UpdateAccountSettings(t.Context(), acc); err != nil {
			t.Fatal(err)
		}
		monday := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC) // 00:00 in New York
		for _, body := range []string{
			fmt.Sprintf(`{"email":"sun@example.com","created_at":%q}`, monday.Add(-time.Second).Format(time.RFC3339)),
			fmt.Sprintf(`{"email":"mon@example.com","created_at":%q,"event_source_url":"https://x.com/?utm_campaign=spring"}`, monday.Format(time.RFC3339)),
			fmt.Sprintf(`{"email":"bot@example.com","honeypot":"x","created_at":%q}`, monday.Add(time.Hour).Format(time.RFC3339)),
			fmt.Sprintf(`{"external_id":"p-1","email":"half@example.com","partial":true,"created_at":%q}`, monday.Add(2*time.Hour).Format(time.RFC3339)),
		} {
			if r := a.postLead(st.key, body); r.status != http.StatusCreated {
				t.Fatalf("post lead = %d %s", r.status, r.raw)
			}
		}
		if r := a.postStage(st.key, fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":"booked","occurred_at":%q}`,
			st.at.Add(26*time.Hour).Format(time.RFC3339))); r.status != http.StatusCreated {
			t.Fatalf("post stage = %d %s", r.status, r.raw)
		}
		// A CRM that spells the stage its own way: the same stage.
		if r := a.postStage(st.key, fmt.Sprintf(`{"lead":{"email":"mon@example.com"},"stage":"QUALIFIED","occurred_at":%q}`,
			monday.Add(3*time.Hour).Format(time.RFC3339))); r.status != http.StatusCreated {
			t.Fatalf("post stage = %d %s", r.status, r.raw)
		}
		// A sequence from qualified to booked, which the Overview and its
		// CSV count week by week.
		if err := s.CreateSequence(t.Context(), &models.Sequence{AccountID: acc.ID, DatasetID: st.ds.ID, InitialEvent: "QualifiedLead", FinalEvent: "Schedule"}); err != nil {
			t.Fatal(err)
		}
		a.drain()
		owner := a.browser()
		owner.login("crm-owner@example.com")
		home := views.AccountURL(acc.ID, "")
		seqCSV := owner.get(home + "?csv=sequences")
		lines := strings.Split(strings.TrimSpace(seqCSV.body), "\n")
		if len(lines) != 13 || lines[0] != "dataset_id,initial_event,final_event,week_start,complete,at_least" ||
			lines[12] != itoa(st.ds.ID)+",QualifiedLead,Schedule,2026-11-30,1,false" {
			t.Errorf("sequences CSV = %d %q; want a header and 12 weeks, this week's 1 complete", seqCSV.status, seqCSV.body)
		}
		r := owner.get(home)
		wantStatus(t, "overview", r, http.StatusOK)
		// The sequence's weeks as the CSV has them: this week's row, last.
		weeks := r.doc.Find(`[data-testid="sequence-health-item"] [data-testid="sequence-weeks"] tbody tr`)
		last := weeks.Last().Find("td")
		if n, week, count := weeks.Length(), strings.Join(strings.Fields(last.First().Text()), " "), last.Last().Text(); n != 12 || week != "Nov 30 (so far)" || count != "1" {
			t.Errorf("the Overview's sequence weeks: %d, the last %q with %q; want 12, Nov 30 (so far) with 1", n, week, count)
		}
		// Stages count by when they were reached: both changes came this
		// week (Monday), though crm-1 was captured last week. crm-1 went
		// straight to booked: it did not reach qualified.
		want := map[string]int64{
			"count-leads-0": 3, "count-junk-0": 1, "count-partial-0": 1, "count-reached-qualified-0": 1, "count-reached-booked-0": 1,
			"count-leads-1": 2, "count-junk-1": 0, "count-reached-qualified-1": 0, "count-reached-booked-1": 0, "count-reached-won-1": 0,
			"count-leads-2": 5, "count-reached-qualified-2": 1, "count-reached-booked-2": 1,
		}
		// Each table says what it counts.
		for id, head := range map[string]string{"headline": "Leads captured in", "headline-reached": "by when they reached it"} {
			if got := r.doc.Find(`[data-testid="` + id + `"] th`).First().Text(); !strings.Contains(got, head) {
				t.Errorf("%s's first column head = %q; want %q", id, got, head)
			}
		}
		if got := r.doc.Find(`[data-testid="funnel"] figcaption`).Text(); !strings.Contains(got, "by when leads reached them") {
			t.Errorf("funnel title = %q; want it to say it counts by when leads reached the stages", got)
		}
		// The funnel's cohort: the leads captured in the range at a stage
		// or a later one now (crm-1 at booked reached qualified).
		cohort := owner.get(home + "?funnel=cohort")
		if got := cohort.doc.Find(`[data-testid="funnel"] figcaption`).Text(); got != "Funnel of the leads captured in the last 28 days" {
			t.Errorf("cohort funnel title = %q", got)
		}
		var steps []string
		cohort.doc.Find(`[data-testid="funnel-count"]`).Each(func(_ int, c *goquery.Selection) { steps = append(steps, c.Text()) })
		if strings.Join(steps, " ") != "5 2 1 0" {
			t.Errorf("cohort funnel = %v; want 5 leads, 2 at qualified or later, 1 booked, none won", steps)
		}
		for id, n := range want {
			if got := r.text(id); got != strconv.FormatInt(n, 10) {
				t.Errorf("%s = %q; want %d", id, got, n)
			}
		}
		// Every number's link lists as many rows as it says.
		cells := r.doc.Find(`[data-testid="headline"] td a`)
		if cells.Length() < 27 {
			t.Fatalf("%d linked numbers; want every cell linked", cells.Length())
		}
		cells.Each(func(_ int, cell *goquery.Selection) {
			href, _ := cell.Attr("href")
			n, _ := strconv.Atoi(strings.ReplaceAll(cell.Text(), ",", ""))
			page := owner.get(href)
			rows := page.doc.Find(`[data-testid="lead-row"], [data-testid="event-row"]`).Length()
			if rows != n {
				t.Errorf("%s: %d rows; the Overview says %d", href, rows, n)
			}
		})
		// The filters narrow every number: campaign spring is one lead.
		r = owner.get(home + "?campaign=spring")
		if got := r.text("count-leads-2"); got != "1" {
			t.Errorf("campaign spring: leads %q; want 1", got)
		}
		r = owner.get(home + "?source=instant_form&from=2026-11-29&to=2026-11-29")
		if got := r.text("count-leads-2"); got != "1" {
			t.Errorf("instant forms of Nov 29: leads %q; want 1", got)
		}
		if drift, err := s.CountsDrift(t.Context()); err != nil || len(drift) > 0 {
			t.Errorf("counts drift after capture, stage changes and dispatch: %v, %v", drift, err)
		}
		// A table as CSV.
		csv := owner.get(home + "?csv=headline")
		if ct := csv.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") || !strings.Contains(csv.body, "Leads,3,2,5") {
			t.Errorf("headline CSV = %s %q; want the leads row", ct, csv.body)
		}
		if r := owner.get(home + "?csv=nope"); r.status != http.StatusNotFound {
			t.Errorf("unknown CSV table = %d; want 404", r.status)
		}
		// Unreadable dates say so and keep the default range.
		r = owner.get(home + "?from=yesterday")
		if !strings.Contains(r.body, "Could not read the From date") || r.text("count-leads-2") != "5" {
			t.Errorf("bad date: want the problem named and the 28 days shown")
		}
	})
}
