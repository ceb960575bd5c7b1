package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/poll"
	"github.com/leadsignal/leadsignal/internal/stagecsv"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/web"
)

// uploadReply is the JSON of the stage uploads API.
type uploadReply struct {
	status   int
	raw      string
	location string

	ID             int64             `json:"id"`
	Columns        map[string]string `json:"columns"`
	Dates          string            `json:"dates"`
	Rows           int               `json:"rows"`
	WouldRecord    int               `json:"would_record"`
	RecordedBefore int               `json:"recorded_before"`
	Refused        []struct {
		Row    int    `json:"row"`
		Column string `json:"column"`
		Reason string `json:"reason"`
	} `json:"refused"`
	UnmappedStages []struct {
		Label     string  `json:"label"`
		Rows      int     `json:"rows"`
		Suggested *string `json:"suggested"`
	} `json:"unmapped_stages"`
	Events   map[string]int `json:"events"`
	Status   string         `json:"status"`
	DoneRows int            `json:"done_rows"`
	Error    struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field"`
	} `json:"error"`
}

// uploadAPI calls the stage uploads API with key; body nil sends none.
func (a *app) uploadAPI(method, path, key, contentType string, body []byte) uploadReply {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, _ := http.NewRequestWithContext(a.t.Context(), method, a.srv.URL+"/api/v1/stage-uploads"+path, rd)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := uploadReply{status: res.StatusCode, raw: string(b), location: res.Header.Get("Location")}
	if err := json.Unmarshal(b, &r); err != nil {
		a.t.Fatalf("%s %s: not JSON (%d): %s", method, path, res.StatusCode, b)
	}
	return r
}

func (r uploadReply) unmapped() string {
	var out []string
	for _, u := range r.UnmappedStages {
		s := "-"
		if u.Suggested != nil {
			s = *u.Suggested
		}
		out = append(out, fmt.Sprintf("%s=%d>%s", strings.ToLower(u.Label), u.Rows, s))
	}
	return strings.Join(out, ",")
}

// A nightly export posted as the body answers its preview at once, with
// the labels the account does not know and the stage each probably
// means; stage_aliases reads labels as stages for that upload only;
// apply answers 202 and GET follows it to done.
func TestAPIStageUploads(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		csv := []byte(labelsCSV(st.at))

		r := a.uploadAPI(http.MethodPost, "", st.key, "text/csv", csv)
		if r.status != http.StatusCreated || r.ID == 0 || r.Rows != 6 || r.WouldRecord != 3 || r.RecordedBefore != 0 || len(r.Refused) != 3 {
			t.Fatalf("preview = %d %s; want 201, 6 rows, Jane's 3 to record, Bob's and nobody's refused", r.status, r.raw)
		}
		// Close Date is the won date: won rows' date, and the others' when the
		// file has no other.
		wantCols := map[string]string{"lead.email": "Email", "stage": "Deal Stage", "won_at": "Close Date", "value": "Amount"}
		if fmt.Sprint(r.Columns) != fmt.Sprint(wantCols) {
			t.Errorf("columns = %v; want %v", r.Columns, wantCols)
		}
		if r.Refused[0].Column != "Email" || !strings.Contains(r.Refused[0].Reason, "no lead of this account has this email") {
			t.Errorf("refused[0] = %+v; want the Email column and why", r.Refused[0])
		}
		if got := r.unmapped(); got != "qualified to buy=1>qualified,appointment scheduled=1>booked,closed won=1>won" {
			t.Errorf("unmapped_stages = %s (%s)", got, r.raw)
		}
		if len(r.Events) != 0 || !strings.Contains(r.raw, `"events":{}`) {
			t.Errorf("events = %v; want none, as {}", r.Events)
		}
		if strings.Contains(r.raw, `"status"`) {
			t.Errorf("the preview's JSON has a status: %s", r.raw)
		}

		// For this upload only, the labels read as the account's stages.
		q := "?" + url.Values{"stage_aliases": {"Qualified To Buy:qualified,Appointment Scheduled:Booked"},
			"columns": {"value:,stage:deal stage"}}.Encode()
		r = a.uploadAPI(http.MethodPost, q, st.key, "text/csv; charset=utf-8", csv)
		if r.status != http.StatusCreated || r.unmapped() != "closed won=1>won" || r.Events["QualifiedLead"] != 1 || r.Events["Schedule"] != 1 {
			t.Fatalf("with stage_aliases = %d %s; want Closed Won alone unmapped and qualified's and booked's events", r.status, r.raw)
		}
		if _, ok := r.Columns["value"]; ok {
			t.Errorf("columns=value: kept a value column: %v", r.Columns)
		}
		stages, err := s.Stages(ctx, st.acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range stages {
			if len(x.Aliases) != 0 {
				t.Errorf("stage %s got aliases %v; stage_aliases is for the upload only", x.Name, x.Aliases)
			}
		}

		id := itoa(r.ID)
		ap := a.uploadAPI(http.MethodPost, "/"+id+"/apply", st.key, "", nil)
		if ap.status != http.StatusAccepted || ap.ID != r.ID || (ap.Status != "applying" && ap.Status != "done") || ap.WouldRecord != 3 {
			t.Fatalf("apply = %d %s; want 202 applying", ap.status, ap.raw)
		}
		var g uploadReply
		poll.Until(t, 30*time.Second, func() error {
			if g = a.uploadAPI(http.MethodGet, "/"+id, st.key, "", nil); g.Status != "done" {
				return fmt.Errorf("status %s", g.Status)
			}
			return nil
		})
		if g.status != http.StatusOK || g.DoneRows != 6 || g.WouldRecord != 3 || g.Events["QualifiedLead"] != 1 {
			t.Errorf("GET after apply = %d %s", g.status, g.raw)
		}
		if got := stageChangeTotal(t, s, st.acc); !strings.Contains(got, "qualified=1") || !strings.Contains(got, "booked=1") || !strings.Contains(got, "Closed Won=1") {
			t.Errorf("recorded %s; want qualified, booked and the label Closed Won", got)
		}
		again := a.uploadAPI(http.MethodPost, "/"+id+"/apply", st.key, "", nil)
		if again.status != http.StatusConflict || again.Error.Code != "not_previewed" {
			t.Errorf("apply twice = %d %s; want 409 not_previewed", again.status, again.raw)
		}

		// Nothing to record: applying is refused, with why.
		r = a.uploadAPI(http.MethodPost, "", st.key, "text/csv", []byte("Email,Stage,Date\nnobody@example.com,won,2026-11-30\nnone@example.com,won,2026-11-30\n"))
		if r.status != http.StatusCreated || r.WouldRecord != 0 || len(r.Refused) != 2 {
			t.Fatalf("refused file = %d %s", r.status, r.raw)
		}
		ap = a.uploadAPI(http.MethodPost, "/"+itoa(r.ID)+"/apply", st.key, "", nil)
		if ap.status != http.StatusConflict || ap.Error.Code != "nothing_to_record" || ap.Error.Message != "Nothing to record: 2 rows refused." {
			t.Errorf("apply with nothing to record = %d %s", ap.status, ap.raw)
		}

		// Another account's key sees none of these uploads.
		_, otherKey := a.ingestAccount("other", "US")
		for _, p := range []string{"/" + id, "/" + id + "/apply"} {
			method := http.MethodGet
			if strings.HasSuffix(p, "apply") {
				method = http.MethodPost
			}
			if r := a.uploadAPI(method, p, otherKey, "", nil); r.status != http.StatusNotFound || r.Error.Code != "not_found" {
				t.Errorf("%s %s with another account's key = %d %s; want 404", method, p, r.status, r.raw)
			}
		}
	})
}

// An upload whose preview outlives the API's wait, even one cut short
// inside a read, answers where it stands, at its own address. Not
// parallel: the wait is the server's.
func TestAPIStageUploadOutlivesTheWait(t *testing.T) {
	web.SetUploadWait(t, time.Nanosecond)
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		r := a.uploadAPI(http.MethodPost, "", st.key, "text/csv", []byte(labelsCSV(st.at)))
		if r.status != http.StatusAccepted && r.status != http.StatusCreated || r.ID == 0 {
			t.Fatalf("upload = %d %s; want 202 or 201 with the upload", r.status, r.raw)
		}
		if want := "/api/v1/stage-uploads/" + itoa(r.ID); r.location != want {
			t.Errorf("Location %q; want %q", r.location, want)
		}
		poll.Until(t, 30*time.Second, func() error {
			if g := a.uploadAPI(http.MethodGet, "/"+itoa(r.ID), st.key, "", nil); g.Status != "previewed" {
				return fmt.Errorf("status %s", g.Status)
			}
			return nil
		})
	})
}

// Bad input gets a clear answer in the API's error shape, and stores
// nothing.
func TestAPIStageUploadsBadInput(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		good := []byte(labelsCSV(st.at))
		many := &strings.Builder{}
		many.WriteString("Email,Stage,Date\n")
		for range stagecsv.MaxRows + 1 {
			many.WriteString("a@b.co,won,2026-11-30\n")
		}
		tests := []struct {
			name        string
			method      string
			path        string
			key         string
			contentType string
			body        []byte
			status      int
			code, field string
			message     string
		}{
			{"no key", "POST", "", "", "text/csv", good, 401, "missing_key", "", ""},
			{"unknown key", "POST", "", "nope", "text/csv", good, 401, "invalid_key", "", ""},
			{"JSON body", "POST", "", st.key, "application/json", []byte(`{"stage":"won"}`), 415, "unsupported_media_type", "", "text/csv"},
			{"no content type", "POST", "", st.key, "", good, 415, "unsupported_media_type", "", ""},
			{"multipart", "POST", "", st.key, "multipart/form-data; boundary=x", good, 415, "unsupported_media_type", "", ""},
			{"empty body", "POST", "", st.key, "text/csv", []byte{}, 422, "invalid_file", "", ""},
			{"NUL byte", "POST", "", st.key, "text/csv", []byte("Email,Stage,Date\na@b.co,w\x00n,2026-11-30\n"), 422, "invalid_file", "", "NUL"},
			{"UTF-16", "POST", "", st.key, "text/csv", []byte("\xff\xfeE\x00m\x00"), 422, "invalid_file", "", "UTF-16"},
			{"over 20 MiB", "POST", "", st.key, "text/csv", bytes.Repeat([]byte("a"), stagecsv.MaxBytes+1), 413, "file_too_large", "", "20 MiB"},
			{"over 100,000 rows", "POST", "", st.key, "text/csv", []byte(many.String()), 422, "invalid_file", "", "100"},
			{"unknown field", "POST", "?columns=" + url.QueryEscape("deal:Deal Stage"), st.key, "text/csv", good, 422, "invalid_field", "columns", "not a field"},
			{"unknown column", "POST", "?columns=" + url.QueryEscape("stage:Pipeline"), st.key, "text/csv", good, 422, "invalid_field", "columns", `no column "Pipeline"`},
			{"column without colon", "POST", "?columns=stage", st.key, "text/csv", good, 422, "invalid_field", "columns", "<field>:<column>"},
			{"field twice", "POST", "?columns=" + url.QueryEscape("stage:Deal Stage,stage:Email"), st.key, "text/csv", good, 422, "invalid_field", "columns", "twice"},
			{"required field unfilled", "POST", "?columns=" + url.QueryEscape("won_at:"), st.key, "text/csv", good, 422, "invalid_field", "columns", "occurred_at"},
			{"unknown date order", "POST", "?dates=sideways", st.key, "text/csv", good, 422, "invalid_field", "dates", "no date order"},
			{"alias to no stage", "POST", "?stage_aliases=" + url.QueryEscape("Closed Won:paid"), st.key, "text/csv", good, 422, "invalid_field", "stage_aliases", `"paid" is none of the account's stages`},
			{"alias without colon", "POST", "?stage_aliases=won", st.key, "text/csv", good, 422, "invalid_field", "stage_aliases", "<label>:<stage>"},
			{"alias label with a control character", "POST", "?stage_aliases=" + url.QueryEscape("Closed\x00Won:won"), st.key, "text/csv", good, 422, "invalid_field", "stage_aliases", "label"},
			{"alias label too long", "POST", "?stage_aliases=" + url.QueryEscape(strings.Repeat("x", 101)+":won"), st.key, "text/csv", good, 422, "invalid_field", "stage_aliases", "100 characters"},
			{"unknown id", "GET", "/999999", st.key, "", nil, 404, "not_found", "", ""},
			{"id not a number", "GET", "/abc", st.key, "", nil, 404, "not_found", "", ""},
			{"negative id", "GET", "/-1", st.key, "", nil, 404, "not_found", "", ""},
			{"40,000-character id", "GET", "/" + strings.Repeat("9", 40_000), st.key, "", nil, 404, "not_found", "", ""},
			{"apply unknown id", "POST", "/999999/apply", st.key, "", nil, 404, "not_found", "", ""},
			{"GET the collection", "GET", "", st.key, "", nil, 405, "method_not_allowed", "", ""},
			{"DELETE an upload", "DELETE", "/1", st.key, "", nil, 405, "method_not_allowed", "", ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := a.uploadAPI(tt.method, tt.path, tt.key, tt.contentType, tt.body)
				if r.status != tt.status || r.Error.Code != tt.code || r.Error.Field != tt.field || !strings.Contains(r.Error.Message, tt.message) {
					t.Errorf("%s %s = %d %s; want %d %s field %q with %q", tt.method, tt.name, r.status, cutBody(r.raw), tt.status, tt.code, tt.field, tt.message)
				}
			})
		}
		us, err := s.StageUploads(t.Context(), st.acc.ID, 10)
		if err != nil || len(us) != 0 {
			t.Errorf("uploads stored by bad requests: %d, %v; want none", len(us), err)
		}
	})
}

// An upload's dates with slashes are read as the dates parameter says,
// else as the guess (month first in the US): 05/03/2026 is May 3 or 5
// March, and the answer says which. A row refused for the reading says
// how it was read.
func TestAPIStageUploadDates(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("dates", "US")
		if r := a.postLead(key, `{"external_id":"d-1","email":"d@example.com","created_at":"2026-04-01T12:00:00Z"}`); r.status != http.StatusCreated {
			t.Fatalf("post lead = %d %s", r.status, r.raw)
		}
		file := []byte("External ID,Deal Stage,Close Date\nd-1,qualified,05/03/2026\n")
		for _, tt := range []struct {
			query, dates    string
			record, refused int
			reason          string
		}{
			{"", "month_first", 1, 0, ""},
			{"?dates=month_first", "month_first", 1, 0, ""},
			{"?dates=day_first", "day_first", 0, 1,
				"Close Date 05/03/2026 (read as Mar 5, 2026, day first) is before the lead was captured (Apr 1, 2026 12:00 PM UTC)"},
		} {
			r := a.uploadAPI("POST", tt.query, key, "text/csv", file)
			if r.status != http.StatusCreated || r.Dates != tt.dates || r.WouldRecord != tt.record || len(r.Refused) != tt.refused ||
				tt.reason != "" && r.Refused[0].Reason != tt.reason {
				t.Errorf("upload%s = %d %s; want dates %s, %d to record, %d refused %q", tt.query, r.status, cutBody(r.raw),
					tt.dates, tt.record, tt.refused, tt.reason)
			}
			// Its page says when it came, and no one as who brought it.
			b := a.browser()
			b.login("dates-owner@example.com")
			page := b.get(fmt.Sprintf("/accounts/%d/stages/uploads/%d", acc.ID, r.ID))
			if got := strings.Join(strings.Fields(page.doc.Find(`.upload-head p`).Text()), " "); got != "1 row, uploaded just now." {
				t.Errorf("the upload's page says %q; want %q", got, "1 row, uploaded just now.")
			}
		}
	})
}

func cutBody(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
