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

// datasetLogRows is how many events the send log at path lists, every page
// of it followed.
func datasetLogRows(t *testing.T, b *browser, path string) int64 {
	t.Helper()
	var n int64
	for path != "" {
		r := b.get(path)
		wantStatus(t, "send log "+path, r, http.StatusOK)
		n += int64(r.doc.Find(`[data-testid="event-row"]`).Length())
		path = r.doc.Find(`[hx-get*="after="]`).AttrOr("hx-get", "")
	}
	return n
}

// countCell reads a count shown on a page: its number and its link.
func countCell(t *testing.T, s *goquery.Selection) (int64, string) {
	t.Helper()
	text := strings.ReplaceAll(strings.Fields(strings.TrimSpace(s.Text()) + " x")[0], ",", "")
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		t.Fatalf("count %q is not a number", s.Text())
	}
	href, _ := s.Attr("href")
	if a := s.Find("a"); a.Length() > 0 {
		href, _ = a.Attr("href")
	}
	return n, href
}

// A dry-run dataset's counts name what they count (built in dry run, held
// back, waiting), add up to its events, and each opens the send log on
// exactly its rows, on the Datasets list and on the dataset's page. The
// other dataset's events count there, not here.
func TestDatasetCountsAddUpToTheSendLog(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		b := a.browser()
		b.login("crm-owner@example.com")
		other := models.Dataset{AccountID: st.acc.ID, Name: "Other", PixelID: "223456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(t.Context(), &other); err != nil {
			t.Fatal(err)
		}
		// Jane's instant form lead was built in dry run by the dispatcher
		// below. Website leads: most carry their visitor's browser and are built
		// in dry run; two lack a page URL and are held back at once.
		for i := range 9 {
			extra := `,"event_source_url":"https://example.com/quote","client_user_agent":"Mozilla/5.0 (Test)","client_ip_address":"203.0.113.7"`
			if i < 2 {
				extra = ""
			}
			r := a.postLead(st.key, fmt.Sprintf(`{"external_id":"w-%d","email":"w%d@example.com","created_at":%q%s}`,
				i, i, st.at.Add(time.Duration(i)*time.Minute).Format(time.RFC3339), extra))
			if r.status != http.StatusCreated {
				t.Fatalf("post lead = %d %s", r.status, r.raw)
			}
		}
		// Jane won: a Purchase, with QualifiedLead and Schedule filled in.
		if r := a.postStage(st.key, fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":"won","occurred_at":%q,"value":900,"currency":"EUR"}`,
			st.at.Add(time.Hour).Format(time.RFC3339))); r.status != http.StatusCreated {
			t.Fatalf("post stage = %d %s", r.status, r.raw)
		}
		a.drain()
		// One more lead after the dispatcher ran: its event waits.
		if r := a.postLead(st.key, `{"external_id":"w-late","email":"late@example.com","event_source_url":"https://example.com/quote","client_user_agent":"Mozilla/5.0 (Test)"}`); r.status != http.StatusCreated {
			t.Fatalf("post lead = %d %s", r.status, r.raw)
		}

		list := b.get(views.AccountURL(st.acc.ID, "/datasets"))
		wantStatus(t, "datasets", list, http.StatusOK)
		for _, d := range []models.Dataset{st.ds, other} {
			row := list.doc.Find(fmt.Sprintf(`[data-testid="dataset-row"][data-dataset="%d"]`, d.ID))
			if row.Length() != 1 {
				t.Fatalf("the Datasets list has no row for %s", d.Name)
			}
			checkCounts(t, b, "Datasets list, "+d.Name, row)
		}
		main := list.doc.Find(fmt.Sprintf(`[data-testid="dataset-row"][data-dataset="%d"]`, st.ds.ID))
		for status, want := range map[models.EventStatus]int64{models.EventDryRun: 1 + 7 + 3, models.EventHeldBack: 2, models.EventQueued: 1} {
			if n, _ := countCell(t, main.Find(`[data-testid="dataset-count-`+string(status)+`"]`)); n != want {
				t.Errorf("Main's %s count = %d; want %d", status, n, want)
			}
		}
		heads := list.doc.Find(`[data-testid="datasets-table"] thead th`).Map(func(_ int, s *goquery.Selection) string { return s.Text() })
		if got := strings.Join(heads, ","); got != "Name,Mode,Events,Waiting,Sent,Held back,Failed,Dry run,Id,Token" {
			t.Errorf("the list's columns = %s", got)
		}

		page := b.get(views.AccountURL(st.acc.ID, "/datasets/"+itoa(st.ds.ID)))
		wantStatus(t, "dataset page", page, http.StatusOK)
		checkCounts(t, b, "Main's page", page.doc.Find(`[data-testid="dataset-counts"]`))
		if got := strings.Join(strings.Fields(page.text("dataset-counts")), " "); !strings.Contains(got, "11 dry run") ||
			!strings.Contains(got, "2 held back") || !strings.Contains(got, "1 waiting") {
			t.Errorf("Main's page counts = %q; want each count to say what it counts", got)
		}
	})
}

// checkCounts checks that the counts in sel add up to its total, and that
// each count's link opens the send log on as many rows as it says.
func checkCounts(t *testing.T, b *browser, what string, sel *goquery.Selection) {
	t.Helper()
	total, totalURL := countCell(t, sel.Find(`[data-testid="dataset-total"]`))
	if total == 0 || !strings.Contains(totalURL, "/events?dataset=") {
		t.Fatalf("%s: total %d links to %q", what, total, totalURL)
	}
	if rows := datasetLogRows(t, b, totalURL); rows != total {
		t.Errorf("%s: %d events, the send log it links to lists %d", what, total, rows)
	}
	var sum int64
	sel.Find(`[data-testid^="dataset-count-"]`).Each(func(_ int, c *goquery.Selection) {
		status := strings.TrimPrefix(c.AttrOr("data-testid", ""), "dataset-count-")
		n, href := countCell(t, c)
		sum += n
		if n == 0 {
			return
		}
		if !strings.Contains(href, "status="+status) {
			t.Errorf("%s: the %s count links to %q", what, status, href)
		}
		if rows := datasetLogRows(t, b, href); rows != n {
			t.Errorf("%s: %d %s, the send log it links to lists %d", what, n, status, rows)
		}
	})
	if sum != total {
		t.Errorf("%s: the counts add up to %d; the total says %d", what, sum, total)
	}
}
