package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/stagecsv"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// A HubSpot deals export, as exported: no email column (the contact is
// "Name (email)" in Associated Contact), a won row dated by its day alone
// on the lead's own day, an open row dated by its last modification. It
// is read with no manual mapping; the day alone is recorded just after
// the lead, and the rows refused are told by the file's columns, with
// times in the account's zone.
func TestStageUploadHubSpotExport(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		acc := st.acc
		acc.Timezone, acc.Currency = "America/Chicago", "USD"
		acc, err := s.UpdateAccountSettings(t.Context(), acc)
		if err != nil {
			t.Fatal(err)
		}
		chicago, err := time.LoadLocation("America/Chicago")
		if err != nil {
			t.Fatal(err)
		}
		day := st.at.In(chicago).Format("01/02/2006")
		early := st.at.Add(-time.Hour).In(chicago).Format("01/02/2006 15:04")
		csv := "Record ID,Deal Name,Deal Stage,Pipeline,Amount,Close Date,Last Modified Date,Associated Contact\n" +
			"1,Roof,won,Sales,\"$1,200.00\"," + day + ",,Jane Roe (jane@example.com)\n" +
			"2,Roof,qualified,Sales,,," + early + ",\"Jane Roe (jane@example.com);Ann Roe (ann@example.com)\"\n" +
			"3,Other,won,Sales,$10," + day + ",,Bob <nobody@example.com>\n"
		b := a.browser()
		b.login("crm-owner@example.com")
		id := uploadID(t, b.uploadFile(acc, "hubspot-deals.csv", []byte(csv), true))
		u := waitUpload(t, s, acc, id, models.UploadPreviewed)
		if u.Applied != 1 || u.Refused != 2 {
			t.Errorf("preview = %d new, %d refused; want 1, 2", u.Applied, u.Refused)
		}
		page := stagesURL(acc, "/uploads/"+itoa(id))
		r := b.get(page)
		want := []string{
			fmt.Sprintf("3 Last Modified Date: Last Modified Date %q is before the lead was captured (%s)", early,
				st.at.In(chicago).Format("Jan 2, 2006 3:04 PM MST")),
			`4 Associated Contact: Associated Contact "Bob <nobody@example.com>": no lead of this account has this email`,
		}
		if got := uploadProblems(r); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("problems =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if got := r.text("why-email"); !strings.Contains(got, "the email in ‘Name (email)’") {
			t.Errorf("why the email column: %q", got)
		}
		if got := r.text("date-rule"); !strings.Contains(got, "“Close Date”: the won date, for won rows") || !strings.Contains(got, "“Last Modified Date” for the others") {
			t.Errorf("date rule: %q", got)
		}
		if !strings.Contains(r.body, "America/Chicago") {
			t.Error("the mapping step does not name the account's zone")
		}

		r = b.post(page+"/apply", url.Values{"pass": {itoa(int64(u.Pass))}})
		wantStatus(t, "apply", r, http.StatusSeeOther)
		waitUpload(t, s, acc, id, models.UploadDone)
		cs, err := s.StageChanges(t.Context(), acc.ID, st.leadID)
		if err != nil || len(cs) != 1 {
			t.Fatalf("stage changes = %+v, %v; want the won row", cs, err)
		}
		c := cs[0]
		if c.Stage != "won" || !c.OccurredAt.Equal(st.at.Add(time.Second)) || c.Value == nil || *c.Value != 1200 || c.Currency != "USD" {
			t.Errorf("won = %s at %v, %v %s; want won at %v (just after the lead), 1200 USD", c.Stage, c.OccurredAt, c.Value, c.Currency, st.at.Add(time.Second))
		}
	})
}

// An upload reads at most 500 columns: a file with more is refused on the
// page, with the count, and nothing is stored.
func TestStageUploadColumnLimit(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	a := newApp(t, s)
	st := newStageSetup(t, a, s)
	b := a.browser()
	b.login("crm-owner@example.com")
	file := func(n int) []byte {
		names := []string{"email", "stage", "occurred_at"}
		for i := len(names); i < n; i++ {
			names = append(names, fmt.Sprintf("x%d", i))
		}
		return []byte(strings.Join(names, ",") + "\njane@example.com,qualified,2026-11-30\n")
	}
	r := b.uploadFile(st.acc, "wide.csv", file(10_000), true)
	wantStatus(t, "10,000 columns", r, http.StatusUnprocessableEntity)
	if got := r.text("upload-error"); !strings.Contains(got, "names 10,000 columns; an upload reads at most 500") {
		t.Errorf("10,000 columns: %q", got)
	}
	r = b.uploadFile(st.acc, "wide.csv", file(stagecsv.MaxColumns+1), true)
	wantStatus(t, "501 columns", r, http.StatusUnprocessableEntity)
	if us, err := s.StageUploads(t.Context(), st.acc.ID, 10); err != nil || len(us) != 0 {
		t.Errorf("uploads stored = %d, %v; want none", len(us), err)
	}
	id := uploadID(t, b.uploadFile(st.acc, "wide.csv", file(stagecsv.MaxColumns), true))
	waitUpload(t, s, st.acc, id, models.UploadPreviewed)
}
