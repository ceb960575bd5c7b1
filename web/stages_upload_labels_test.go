package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// labelsCSV is a real deals export: its stages are the CRM's labels, none
// of them the account's names. Jane qualified, booked and won (without
// its amount), Bob lost (spelled two ways), and a lead the account lacks.
func labelsCSV(at time.Time) string {
	d := func(h int) string { return at.Add(time.Duration(h) * time.Hour).Format("2006-01-02 15:04") }
	return "Email,Deal Stage,Close Date,Amount\n" +
		"jane@example.com,Qualified To Buy," + d(1) + ",\n" +
		"jane@example.com,Appointment Scheduled," + d(2) + ",\n" +
		"jane@example.com,Closed Won," + d(3) + ",\n" +
		"bob@example.com,Closed Lost," + d(1) + ",\n" +
		"bob@example.com,closed lost," + d(2) + ",\n" +
		"nobody@example.com,Closed Won," + d(1) + ",\n"
}

// unmappedLabels are the preview's unknown labels as "label: rows rows,
// suggested" (lower-cased labels, sorted).
func unmappedLabels(r resp) []string {
	var out []string
	r.doc.Find(`[data-testid="unmapped-label"]`).Each(func(_ int, s *goquery.Selection) {
		sug := strings.TrimSpace(s.Find(`[data-testid="unmapped-label-suggested"] strong`).Text())
		out = append(out, fmt.Sprintf("%s: %s, %s", strings.ToLower(s.AttrOr("data-label", "")),
			strings.TrimSpace(s.Find(`[data-testid="unmapped-label-rows"]`).Text()), sug))
	})
	slices.Sort(out)
	return out
}

// labelStageID is the stage the label's select offers first (its
// suggestion).
func labelStageID(t *testing.T, r resp, label string) string {
	t.Helper()
	sel := r.doc.Find(`[data-testid="unmapped-label"][data-label="` + label + `"] [data-testid="unmapped-label-stage"] option[selected]`)
	if sel.Length() != 1 {
		t.Fatalf("label %q has no stage selected:\n%s", label, r.body)
	}
	return sel.AttrOr("value", "")
}

// The export: the preview lists its unknown labels first, with
// their rows and the stage each probably means; one click saves a label
// as an alias and the preview counts again (the won row without its
// amount is flagged now, and qualified's events appear), a label's rows
// can be skipped, and a label can become a new stage.
func TestStageUploadUnmappedLabels(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		if r := a.postLead(st.key, fmt.Sprintf(`{"external_id":"crm-2","email":"bob@example.com","created_at":%q}`, st.at.Format(time.RFC3339))); r.status != http.StatusCreated {
			t.Fatalf("post lead = %d %s", r.status, r.raw)
		}
		b := a.browser()
		b.login("crm-owner@example.com")
		id := uploadID(t, b.uploadFile(st.acc, "deals.csv", []byte(labelsCSV(st.at)), true))
		u := waitUpload(t, s, st.acc, id, models.UploadPreviewed)
		if u.Applied != 5 || u.Refused != 1 || u.Events != 0 {
			t.Errorf("preview = %d new, %d refused, %d events; want 5, 1, 0", u.Applied, u.Refused, u.Events)
		}
		page := stagesURL(st.acc, "/uploads/"+itoa(id))
		r := b.get(page)
		want := []string{
			"appointment scheduled: 1 row, booked",
			"closed lost: 2 rows, ",
			"closed won: 1 row, won",
			"qualified to buy: 1 row, qualified",
		}
		if got := unmappedLabels(r); !slices.Equal(got, want) {
			t.Fatalf("unmapped labels =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		labels, counts, apply := strings.Index(r.body, `data-testid="upload-labels"`), strings.Index(r.body, `data-testid="upload-counts"`),
			strings.Index(r.body, `data-testid="upload-apply"`)
		if labels < 0 || labels > counts || counts > apply {
			t.Errorf("the labels (at %d) come before the counts (%d) and the apply button (%d)", labels, counts, apply)
		}
		if got := r.text("upload-no-events"); !strings.Contains(got, "5 rows are under labels that name none of your stages") {
			t.Errorf("no events, and why: %q", got)
		}

		// One click: Closed Won is an alias of won, its suggestion.
		label := func(do, label, stage string) {
			t.Helper()
			r := b.post(page+"/labels", url.Values{"do": {do}, "label": {label}, "stage": {stage}})
			if r.status != http.StatusSeeOther || r.location() != page {
				t.Fatalf("%s %q = %d to %q; want back to the upload", do, label, r.status, r.location())
			}
			waitUpload(t, s, st.acc, id, models.UploadPreviewed)
		}
		label("alias", "Closed Won", labelStageID(t, r, "Closed Won"))
		stages, err := s.Stages(ctx, st.acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		if won := stages[slices.IndexFunc(stages, func(x models.Stage) bool { return x.Name == models.StageWon })]; !slices.Equal(won.Aliases, []string{"Closed Won"}) {
			t.Errorf("won's aliases = %v; want [Closed Won]", won.Aliases)
		}
		u, _ = s.StageUpload(ctx, st.acc.ID, id)
		r = b.get(page)
		if u.Applied != 4 || u.Refused != 2 {
			t.Errorf("after the alias: %d new, %d refused; want Jane's won without its amount refused too", u.Applied, u.Refused)
		}
		if got := r.doc.Find(`[data-testid="upload-flag"]`).Map(func(_ int, s *goquery.Selection) string {
			return s.AttrOr("data-row", "") + " " + strings.TrimSpace(s.Find("code").Text())
		}); !slices.Equal(got, []string{"4 Purchase"}) {
			t.Errorf("flagged rows = %v; want row 4's Purchase without a value", got)
		}
		if slices.ContainsFunc(unmappedLabels(r), func(l string) bool { return strings.HasPrefix(l, "closed won") }) {
			t.Error("Closed Won is still listed once it is an alias")
		}

		label("alias", "Qualified To Buy", labelStageID(t, r, "Qualified To Buy"))
		r = b.get(page)
		if got := eventCounts(r); got != "QualifiedLead=1" {
			t.Errorf("events after qualified's alias = %q; want QualifiedLead=1", got)
		}

		label("skip", "Closed Lost", "")
		r = b.get(page)
		u, _ = s.StageUpload(ctx, st.acc.ID, id)
		if u.Applied != 2 || u.Refused != 2 || r.text("upload-skipped") != "2" {
			t.Errorf("after skipping Closed Lost: %d new, %d refused, skipped %q; want 2, 2, 2", u.Applied, u.Refused, r.text("upload-skipped"))
		}
		if got := unmappedLabels(r); !slices.Equal(got, []string{"appointment scheduled: 1 row, booked"}) {
			t.Errorf("labels left = %v", got)
		}
		// Columns picked again keep the labels skipped.
		r = b.post(page+"/mapping", url.Values{"col_email": {"0"}, "col_stage": {"1"}, "col_occurred_at": {"2"}, "col_value": {"3"}, "date_order": {"mdy"}})
		wantStatus(t, "columns again", r, http.StatusSeeOther)
		waitUpload(t, s, st.acc, id, models.UploadPreviewed)
		if r = b.get(page); r.text("upload-skipped") != "2" {
			t.Errorf("skipped after picking the columns again = %q; want 2", r.text("upload-skipped"))
		}

		// Another account's stage is no stage of this one.
		other, _ := a.ingestAccount("other", "US")
		otherStages, err := s.Stages(ctx, other.ID)
		if err != nil {
			t.Fatal(err)
		}
		r = b.post(page+"/labels", url.Values{"do": {"alias"}, "label": {"Appointment Scheduled"}, "stage": {itoa(otherStages[0].ID)}})
		if r = b.get(page); !strings.Contains(r.text("flash"), "That stage is gone") {
			t.Errorf("another account's stage: flash %q", r.text("flash"))
		}
		if ss, _ := s.Stages(ctx, other.ID); len(ss[0].Aliases) != 0 {
			t.Errorf("another account's stage got aliases %v", ss[0].Aliases)
		}
		// A label that cannot be one is refused with why.
		r = b.post(page+"/labels", url.Values{"do": {"stage"}, "label": {"bad\x01label"}})
		if r = b.get(page); !strings.Contains(r.text("flash"), "bad") {
			t.Errorf("a label with a control character: flash %q", r.text("flash"))
		}

		label("stage", "Appointment Scheduled", "")
		r = b.get(page)
		if r.has("upload-labels") {
			t.Errorf("labels left after the last became a stage: %v", unmappedLabels(r))
		}
		if stages, _ = s.Stages(ctx, st.acc.ID); stages[len(stages)-1].Name != "Appointment Scheduled" {
			t.Errorf("last stage %q; want the new Appointment Scheduled", stages[len(stages)-1].Name)
		}
		if got := r.text("upload-apply"); got != "Record 2 stage changes" {
			t.Errorf("apply button %q", got)
		}
		u, _ = s.StageUpload(ctx, st.acc.ID, id)
		if r := b.post(page+"/apply", url.Values{"pass": {itoa(int64(u.Pass))}}); r.status != http.StatusSeeOther {
			t.Fatalf("apply = %d", r.status)
		}
		waitUpload(t, s, st.acc, id, models.UploadDone)
		if got := stageChangeTotal(t, s, st.acc); got != "Appointment Scheduled=1,qualified=1" && got != "qualified=1,Appointment Scheduled=1" {
			t.Errorf("recorded %s; want qualified and Appointment Scheduled, Closed Lost skipped", got)
		}
		// Labels of an applied upload no longer change.
		r = b.post(page+"/labels", url.Values{"do": {"skip"}, "label": {"Closed Won"}})
		if r = b.get(page); !strings.Contains(r.text("flash"), "can no longer change") {
			t.Errorf("labels of an applied upload: flash %q", r.text("flash"))
		}
	})
}

// A file whose every row is refused says so, offers no apply, and the
// list never calls it ready to apply.
func TestStageUploadNothingToRecord(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		b := a.browser()
		b.login("crm-owner@example.com")
		csv := "Email,Deal Stage,Close Date\nnobody@example.com,won,2026-11-30\nnone@example.com,won,2026-11-30\n"
		id := uploadID(t, b.uploadFile(st.acc, "refused.csv", []byte(csv), true))
		u := waitUpload(t, s, st.acc, id, models.UploadPreviewed)
		page := stagesURL(st.acc, "/uploads/"+itoa(id))
		r := b.get(page)
		if got := r.text("upload-nothing"); got != "Nothing to record: 2 rows refused." {
			t.Errorf("nothing to record: %q", got)
		}
		if r.has("upload-apply") {
			t.Error("an upload with nothing to record offers to apply")
		}
		r = b.get(stagesURL(st.acc, "/uploads"))
		if got := r.text("stage-upload-status"); got != "nothing to record" {
			t.Errorf("the list's status %q; want nothing to record", got)
		}
		if strings.Contains(r.body, "ready to apply") {
			t.Error("the list calls an upload with nothing to record ready to apply")
		}
		b.post(page+"/apply", url.Values{"pass": {itoa(int64(u.Pass))}})
		if r = b.get(page); !strings.Contains(r.text("flash"), "Nothing to record") {
			t.Errorf("apply anyway: flash %q", r.text("flash"))
		}
		if u, _ = s.StageUpload(t.Context(), st.acc.ID, id); u.Status != models.UploadPreviewed {
			t.Errorf("status after apply = %s; want previewed still", u.Status)
		}
	})
}

// An event the recorder would hold back (a Purchase of a mapping without
// a value) flags its row, whatever the row's stage is called.
func TestStageUploadFlagsHeldEvents(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		r0 := models.SendRule{AccountID: st.acc.ID, DatasetID: st.ds.ID, Name: "booked to Purchase", Mode: string(rule.Stage),
			Stage: models.StageBooked, EventName: "Purchase", Combinator: "and", Conditions: "[]", Enabled: true}
		if err := s.CreateSendRule(t.Context(), &r0, nil); err != nil {
			t.Fatal(err)
		}
		b := a.browser()
		b.login("crm-owner@example.com")
		csv := "Email,Deal Stage,Close Date\njane@example.com,Booked!," + st.at.Add(time.Hour).Format("2006-01-02 15:04") + "\n"
		id := uploadID(t, b.uploadFile(st.acc, "booked.csv", []byte(csv), true))
		waitUpload(t, s, st.acc, id, models.UploadPreviewed)
		r := b.get(stagesURL(st.acc, "/uploads/"+itoa(id)))
		flag := r.doc.Find(`[data-testid="upload-flag"]`)
		if flag.Length() != 1 || flag.AttrOr("data-row", "") != "2" || !strings.Contains(flag.Text(), "custom_data.value") {
			t.Errorf("flags = %q; want row 2's Purchase held back for its value", flag.Text())
		}
	})
}
