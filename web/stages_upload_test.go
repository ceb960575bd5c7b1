package web_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/poll"
	"github.com/leadsignal/leadsignal/internal/stagecsv"
	"github.com/leadsignal/leadsignal/internal/stageupload"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// uploadFile posts a CSV file to the account's upload form, with the
// current CSRF token unless csrf is false.
func (b *browser) uploadFile(acc models.Account, name string, content []byte, csrf bool) resp {
	b.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	if csrf {
		if err := w.WriteField("_csrf", b.csrf); err != nil {
			b.t.Fatal(err)
		}
	}
	if name != "" {
		fw, err := w.CreateFormFile("file", name)
		if err != nil {
			b.t.Fatal(err)
		}
		if _, err := fw.Write(content); err != nil {
			b.t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(b.t.Context(), http.MethodPost, b.app.srv.URL+stagesURL(acc, "/uploads"), &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return b.do(req)
}

// uploadID is the id of the upload a redirect leads to.
func uploadID(t *testing.T, r resp) int64 {
	t.Helper()
	if r.status != http.StatusSeeOther {
		t.Fatalf("upload = %d; want a redirect to the upload\n%s", r.status, r.body)
	}
	var id int64
	if _, err := fmt.Sscanf(r.location()[strings.LastIndex(r.location(), "/")+1:], "%d", &id); err != nil {
		t.Fatalf("upload redirect %q: %v", r.location(), err)
	}
	return id
}

// waitUpload waits until the upload's pass in the background ends with
// status want.
func waitUpload(t *testing.T, s *store.Store, acc models.Account, id int64, want models.StageUploadStatus) models.StageUpload {
	t.Helper()
	var u models.StageUpload
	poll.Until(t, 30*time.Second, func() error {
		var err error
		if u, err = s.StageUpload(t.Context(), acc.ID, id); err != nil {
			t.Fatal(err)
		}
		if u.Running() {
			return fmt.Errorf("upload %d still %s", id, u.Status)
		}
		return nil
	})
	if u.Status != want {
		t.Fatalf("upload %d ended %s (%s); want %s", id, u.Status, u.Error, want)
	}
	return u
}

// uploadProblems are the page's problem rows as "row field: reason".
func uploadProblems(r resp) []string {
	var out []string
	r.doc.Find(`[data-testid="upload-problem"]`).Each(func(_ int, s *goquery.Selection) {
		cells := s.Find("td").Map(func(_ int, c *goquery.Selection) string { return strings.TrimSpace(c.Text()) })
		out = append(out, cells[0]+" "+cells[1]+": "+cells[2])
	})
	return out
}

func eventCounts(r resp) string {
	var out []string
	r.doc.Find(`[data-testid="upload-event-count"]`).Each(func(_ int, s *goquery.Selection) {
		out = append(out, s.AttrOr("data-event", "")+"="+strings.TrimSpace(s.Find("td.num").Text()))
	})
	return strings.Join(out, ",")
}

func stageChangeTotal(t *testing.T, s *store.Store, acc models.Account) string {
	t.Helper()
	cs, err := s.StageChangeCounts(t.Context(), acc.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s=%d", c.Stage, c.Changes))
	}
	return strings.Join(out, ",")
}

// uploadCSV is a CRM export: Jane (the setup's lead) won, a lead the
// account lacks, a date that cannot be read, and a second lead booked.
const uploadCSV = "Email Address,Deal Stage,Close Date,Amount,Currency Code\r\n" +
	"jane@example.com,won,2026-11-30 10:00,\"1,200.50\",EUR\r\n" +
	"nobody@example.com,won,2026-11-30,10,EUR\r\n" +
	"jane@example.com,qualified,31/31/2026,,\r\n" +
	"bob@example.com,booked,11/30/2026 9:15 AM,,\r\n"

// A file is previewed first (nothing recorded; its rows' problems by row
// number; the events it would queue per event name), then applied through
// the stage API's path; the same file again records and queues nothing.
func TestStageUploadPreviewApplyAndAgain(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		if r := a.postLead(st.key, fmt.Sprintf(`{"external_id":"crm-2","email":"bob@example.com","created_at":%q}`, st.at.Format(time.RFC3339))); r.status != http.StatusCreated {
			t.Fatalf("post lead = %d %s", r.status, r.raw)
		}
		b := a.browser()
		b.login("crm-owner@example.com")

		id := uploadID(t, b.uploadFile(st.acc, "deals.csv", []byte(uploadCSV), true))
		u := waitUpload(t, s, st.acc, id, models.UploadPreviewed)
		if u.TotalRows != 4 || u.Applied != 2 || u.Replayed != 0 || u.Refused != 2 || u.Events != 5 {
			t.Errorf("preview counts = %+v; want 4 rows, 2 new, 2 refused, 5 events", u)
		}
		if got := stageChangeTotal(t, s, st.acc); got != "" {
			t.Fatalf("stage changes after the preview = %s; want none", got)
		}
		page := stagesURL(st.acc, "/uploads/"+itoa(id))
		r := b.get(page)
		wantStatus(t, "upload page", r, http.StatusOK)
		want := []string{
			"3 Email Address: Email Address nobody@example.com: no lead of this account has this email",
			`4 Close Date: Close Date 31/31/2026 is not a date this upload reads: write it like 2026-12-01T14:03:00Z, 2026-12-01 14:03 or 12/01/2026 (month first)`,
		}
		if got := uploadProblems(r); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("problems =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if got := eventCounts(r); got != "QualifiedLead=2,Schedule=2,Purchase=1" {
			t.Errorf("events per name = %s; want QualifiedLead=2,Schedule=2,Purchase=1", got)
		}
		if got := r.text("upload-apply"); got != "Record 2 stage changes" {
			t.Errorf("apply button %q", got)
		}
		for _, tt := range []struct{ target, col string }{{"email", "0"}, {"stage", "1"}, {"won_at", "2"}, {"value", "3"}, {"currency", "4"}, {"phone", ""}} {
			if got := r.doc.Find(`[data-testid="col-`+tt.target+`"] option[selected]`).AttrOr("value", "?"); got != tt.col {
				t.Errorf("column of %s = %q; want %q (guessed from its name)", tt.target, got, tt.col)
			}
		}

		// A stale preview (its pass is not the current one) applies nothing.
		r = b.post(page+"/apply", url.Values{"pass": {"0"}})
		wantStatus(t, "stale apply", r, http.StatusSeeOther)
		if r = b.get(page); !strings.Contains(r.text("flash"), "changed since this preview") {
			t.Errorf("a stale apply: flash %q", r.text("flash"))
		}
		if got := stageChangeTotal(t, s, st.acc); got != "" {
			t.Fatalf("a stale apply recorded %s", got)
		}
		r = b.post(page+"/apply", url.Values{"pass": {itoa(int64(u.Pass))}})
		wantStatus(t, "apply", r, http.StatusSeeOther)
		u = waitUpload(t, s, st.acc, id, models.UploadDone)
		if u.Applied != 2 || u.Refused != 2 || u.Events != 5 || u.DoneRows != 4 || u.FinishedAt == nil {
			t.Errorf("applied counts = %+v; want 2 recorded, 2 refused, 5 events", u)
		}
		if got := stageChangeTotal(t, s, st.acc); got != "booked=1,won=1" && got != "won=1,booked=1" {
			t.Errorf("stage changes = %s; want won and booked once", got)
		}
		r = b.post(page+"/apply", url.Values{"pass": {itoa(int64(u.Pass))}})
		wantStatus(t, "apply again", r, http.StatusSeeOther)
		if r = b.get(page); !strings.Contains(r.text("flash"), "applied or being applied already") || !r.has("upload-sendlog") {
			t.Errorf("a second apply: flash %q", r.text("flash"))
		}
		if r.has("mapping-submit") {
			t.Error("an applied upload's columns can still be changed")
		}
		// Columns posted from another tab after the apply: refused, back
		// to the upload's page with the reason.
		r = b.post(page+"/mapping", url.Values{"col_email": {"0"}, "col_stage": {"1"}, "col_occurred_at": {"2"}, "date_order": {"mdy"}})
		if r.status != http.StatusSeeOther || r.location() != page {
			t.Errorf("columns of an applied upload = %d to %q; want back to %s", r.status, r.location(), page)
		}

		// The same file again: its rows were recorded before; nothing to queue.
		id2 := uploadID(t, b.uploadFile(st.acc, "deals.csv", []byte(uploadCSV), true))
		u2 := waitUpload(t, s, st.acc, id2, models.UploadPreviewed)
		if u2.Applied != 0 || u2.Replayed != 2 || u2.Refused != 2 || u2.Events != 0 {
			t.Errorf("second upload's preview = %+v; want 2 recorded before, nothing to queue", u2)
		}
		r = b.get(stagesURL(st.acc, "/uploads/"+itoa(id2)))
		if !r.has("upload-nothing") || r.has("upload-apply") {
			t.Error("a file recorded before should offer nothing to apply")
		}

		// The list shows both, newest first; htmx polls the panel.
		r = b.get(stagesURL(st.acc, "/uploads"))
		if n := r.doc.Find(`[data-testid="stage-upload-row"]`).Length(); n != 2 {
			t.Errorf("uploads listed = %d; want 2", n)
		}
		r = b.getWith(page+"/progress", htmx)
		wantStatus(t, "progress", r, http.StatusOK)
		if !r.has("upload-panel") || r.has("upload-progress") || strings.Contains(r.body, "<html") {
			t.Errorf("the panel of a finished upload: %s", r.body)
		}
	})
}

// Columns the guess cannot place are picked in the mapping step; a
// mapping without a required field is refused with what is missing.
func TestStageUploadMapping(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		b := a.browser()
		b.login("crm-owner@example.com")
		csv := "Who;What;When\njane@example.com;qualified;30/11/2026 10:00\n"
		id := uploadID(t, b.uploadFile(st.acc, "odd.csv", []byte(csv), true))
		u, err := s.StageUpload(t.Context(), st.acc.ID, id)
		if err != nil || u.Status != models.UploadMapping {
			t.Fatalf("upload = %+v, %v; want it waiting for its columns", u, err)
		}
		page := stagesURL(st.acc, "/uploads/"+itoa(id))
		r := b.get(page)
		if !r.has("upload-needs-mapping") || r.doc.Find(`[data-testid="col-email"] option`).Length() != 4 {
			t.Fatalf("mapping page: %s", r.body)
		}
		if got := r.doc.Find(`[data-testid="col-email"] option[value="0"]`).Text(); !strings.Contains(got, "Who · e.g. jane@example.com") {
			t.Errorf("column option %q; want its name and a sample", got)
		}
		r = b.post(page+"/mapping", url.Values{"col_email": {"0"}, "col_stage": {"1"}, "date_order": {"dmy"}})
		wantStatus(t, "mapping without a date", r, http.StatusUnprocessableEntity)
		if got := r.text("mapping-problem"); !strings.Contains(got, "date of the change (occurred_at)") {
			t.Errorf("mapping problem %q", got)
		}
		r = b.post(page+"/mapping", url.Values{"col_email": {"0"}, "col_stage": {"1"}, "col_occurred_at": {"9"}, "date_order": {"dmy"}})
		wantStatus(t, "a column the file lacks", r, http.StatusBadRequest)
		r = b.post(page+"/mapping", url.Values{"col_email": {"0"}, "col_stage": {"1"}, "col_occurred_at": {"2"}, "date_order": {"dmy"}})
		wantStatus(t, "mapping", r, http.StatusSeeOther)
		u = waitUpload(t, s, st.acc, id, models.UploadPreviewed)
		if u.Applied != 1 || u.Refused != 0 || u.Events != 1 {
			t.Errorf("preview = %+v; want the row matched with one event", u)
		}
	})
}

// A file that cannot be used is refused whole, saying why; nothing is
// stored.
func TestStageUploadRefusesBadFiles(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	a := newApp(t, s)
	st := newStageSetup(t, a, s)
	b := a.browser()
	b.login("crm-owner@example.com")
	tests := []struct {
		name, file, content string
		status              int
		want                string
	}{
		{"no file", "", "", http.StatusUnprocessableEntity, "Choose a CSV file"},
		{"empty", "e.csv", "", http.StatusUnprocessableEntity, "The file is empty"},
		{"a workbook", "deals.xlsx", "PK\x03\x04\x14\x00\x06\x00", http.StatusUnprocessableEntity, "workbook (.xlsx)"},
		{"no header", "d.csv", "jane@example.com,won,2026-11-30\n", http.StatusUnprocessableEntity, "not column names"},
		{"NUL", "d.csv", "email,stage,occurred_at\njane@example.com,w\x00n,2026-11-30\n", http.StatusUnprocessableEntity, "NUL byte on line 2"},
		{"latin-1", "d.csv", "email,stage,occurred_at\nj\xe9@example.com,won,2026-11-30\n", http.StatusUnprocessableEntity, "not UTF-8 text (line 2"},
		{"too large", "big.csv", "email,stage,occurred_at\n" + strings.Repeat("x", stagecsv.MaxBytes), http.StatusUnprocessableEntity, "an upload is at most 20 MiB"},
		{"far too large", "big.csv", strings.Repeat("x", stagecsv.MaxBytes+1<<20), http.StatusRequestEntityTooLarge, "an upload is at most 20 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.uploadFile(st.acc, tt.file, []byte(tt.content), true)
			wantStatus(t, tt.name, r, tt.status)
			if !strings.Contains(r.body, tt.want) {
				t.Errorf("answer lacks %q:\n%s", tt.want, r.body)
			}
		})
	}
	if us, err := s.StageUploads(t.Context(), st.acc.ID, 10); err != nil || len(us) != 0 {
		t.Errorf("uploads stored = %d, %v; want none", len(us), err)
	}
	// A BOM and a file saved by Excel with semicolons are fine.
	r := b.uploadFile(st.acc, "excel.csv", []byte("\xEF\xBB\xBFE-mail;Lead Status;Date\r\njane@example.com;qualified;30.11.2026\r\n"), true)
	waitUpload(t, s, st.acc, uploadID(t, r), models.UploadPreviewed)
}

// Viewers get no upload, another account's upload is not found, and a
// form without its CSRF token is refused.
func TestStageUploadAccess(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		b := a.browser()
		b.login("crm-owner@example.com")
		id := uploadID(t, b.uploadFile(st.acc, "deals.csv", []byte(uploadCSV), true))
		waitUpload(t, s, st.acc, id, models.UploadPreviewed)
		if r := b.uploadFile(st.acc, "deals.csv", []byte(uploadCSV), false); r.status != http.StatusForbidden {
			t.Errorf("upload without the CSRF token = %d; want 403", r.status)
		}

		viewer := a.user("vic@example.com", false)
		if err := s.SetMember(t.Context(), st.acc.ID, viewer.ID, models.RoleViewer); err != nil {
			t.Fatal(err)
		}
		vb := a.browser()
		vb.login("vic@example.com")
		for _, path := range []string{"/uploads", "/uploads/" + itoa(id)} {
			if r := vb.get(stagesURL(st.acc, path)); r.status != http.StatusForbidden {
				t.Errorf("viewer GET %s = %d; want 403", path, r.status)
			}
		}
		if r := vb.uploadFile(st.acc, "deals.csv", []byte(uploadCSV), true); r.status != http.StatusForbidden {
			t.Errorf("viewer upload = %d; want 403", r.status)
		}
		if r := vb.post(stagesURL(st.acc, "/uploads/"+itoa(id)+"/apply"), url.Values{"pass": {"1"}}); r.status != http.StatusForbidden {
			t.Errorf("viewer apply = %d; want 403", r.status)
		}

		other, _ := a.ingestAccount("other", "US")
		ob := a.browser()
		ob.login("other-owner@example.com")
		for _, path := range []string{"/uploads/" + itoa(id), "/uploads/" + itoa(id) + "/progress"} {
			if r := ob.get(stagesURL(other, path)); r.status != http.StatusNotFound {
				t.Errorf("another account's upload: GET %s = %d; want 404", path, r.status)
			}
		}
		if r := ob.post(stagesURL(other, "/uploads/"+itoa(id)+"/apply"), url.Values{"pass": {"1"}}); r.status != http.StatusNotFound {
			t.Errorf("another account's upload: apply = %d; want 404", r.status)
		}
		if r := ob.post(stagesURL(other, "/uploads/"+itoa(id)+"/mapping"), url.Values{"col_email": {"0"}}); r.status != http.StatusNotFound {
			t.Errorf("another account's upload: mapping = %d; want 404", r.status)
		}
		if got := stageChangeTotal(t, s, st.acc); got != "" {
			t.Errorf("stage changes = %s; want none", got)
		}
	})
}

// An upload left applying by a server that stopped is resumed by the next
// one's Runner.Run, which stops when its context ends.
func TestStageUploadResumes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		b := a.browser()
		b.login("crm-owner@example.com")
		id := uploadID(t, b.uploadFile(st.acc, "deals.csv", []byte(strings.Replace(uploadCSV, "bob@", "nobody-else@", 1)), true))
		u := waitUpload(t, s, st.acc, id, models.UploadPreviewed)
		// Applying as a server would before it stopped: the pass is
		// started, and no goroutine of this server works on it.
		if _, err := s.StartStageUpload(t.Context(), st.acc.ID, id, u.Mapping, models.UploadApplying,
			[]models.StageUploadStatus{models.UploadPreviewed}, a.clock()); err != nil {
			t.Fatal(err)
		}
		uploads := stageupload.New(stageupload.Options{Store: s, Decider: decide.New(s, nil, nil), Log: testLogger(), Now: a.clock})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- uploads.Run(ctx) }()
		u = waitUpload(t, s, st.acc, id, models.UploadDone)
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v", err)
		}
		if u.Applied != 1 || u.Refused != 3 || u.Events != 3 {
			t.Errorf("resumed upload = %+v; want Jane's won recorded with 3 events", u)
		}
	})
}

// A lead's rows far apart in a large file (here more than a chunk of
// rows apart) are previewed together: the preview counts what applying
// queues, the earlier stage once, not again as filled in.
func TestStageUploadPreviewKeepsALeadsRowsTogether(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		b := a.browser()
		b.login("crm-owner@example.com")
		var csv strings.Builder
		csv.WriteString("Email Address,Deal Stage,Close Date,Amount,Currency Code\n")
		csv.WriteString("jane@example.com,qualified,2026-11-30 09:00,,\n")
		for i := range 1200 {
			fmt.Fprintf(&csv, "nobody%d@example.com,qualified,2026-11-30 09:30,,\n", i)
		}
		csv.WriteString("jane@example.com,won,2026-11-30 10:00,900,EUR\n")

		id := uploadID(t, b.uploadFile(st.acc, "big.csv", []byte(csv.String()), true))
		u := waitUpload(t, s, st.acc, id, models.UploadPreviewed)
		page := stagesURL(st.acc, "/uploads/"+itoa(id))
		r := b.get(page)
		if got := eventCounts(r); got != "Purchase=1,QualifiedLead=1,Schedule=1" || u.Applied != 2 || u.Refused != 1200 {
			t.Errorf("preview: events %s, %d new, %d refused; want Purchase=1,QualifiedLead=1,Schedule=1, 2 new, 1200 refused",
				got, u.Applied, u.Refused)
		}
		if got := uploadProblems(r); len(got) == 0 || !strings.HasPrefix(got[0], "3 Email Address:") {
			t.Errorf("first problem %q; want row 3's", got)
		}
		r = b.post(page+"/apply", url.Values{"pass": {itoa(int64(u.Pass))}})
		wantStatus(t, "apply", r, http.StatusSeeOther)
		if done := waitUpload(t, s, st.acc, id, models.UploadDone); done.Events != u.Events || done.Applied != 2 {
			t.Errorf("applied %d changes, %d events; the preview said %d, %d", done.Applied, done.Events, u.Applied, u.Events)
		}
	})
}
