package web_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/poll"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// An upload of a few thousand rows, two chunks of the apply, writes
// exactly what the stage API writes for the same changes posted one by
// one: the same stage changes, events and queue rows, the same leads'
// stages, and counts that agree with them. A database failure in the
// apply's second chunk, after its stage changes and events were written
// in its transaction, leaves the first chunk recorded and nothing of the
// second; the same file uploaded again records the rest, and then the
// account holds exactly what the stage API's does.
func TestUploadWritesWhatTheStageAPIWrites(t *testing.T) {
	t.Parallel()
	eachWithSQL(t, func(t *testing.T, s *store.Store, db *sql.DB) {
		a := newApp(t, s)
		const leads = 1000
		api, apiKey := a.twinAccount("same-api", leads)
		up, upKey := a.twinAccount("same-upload", leads)
		rows := sameRows(a.clock(), leads)

		// Each half of the rows holds one change of each lead: a half's
		// posts may come in any order.
		for half := range 2 {
			inParallel(leads, func(i int) {
				r := rows[half*leads+i]
				if rep := a.postStage(apiKey, r.body()); rep.status != http.StatusCreated && rep.status != http.StatusOK {
					t.Errorf("row %d: post stage = %d %s", half*leads+i+2, rep.status, rep.raw)
				}
			})
		}
		if t.Failed() {
			t.FailNow()
		}

		// The second chunk fails at its last write: lead 700's queue rows,
		// once its second change is in stage_changes.
		victim := a.leadID(up.ID, "up-700")
		failing := fmt.Sprintf(`CREATE FUNCTION fail_mid_apply() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF NEW.lead_id = %[1]d AND (SELECT count(*) FROM stage_changes WHERE lead_id = NEW.lead_id) >= 2 THEN
					RAISE EXCEPTION 'injected failure';
				END IF;
				RETURN NEW;
			END $$;
			CREATE TRIGGER fail_mid_apply BEFORE INSERT ON unsent_events FOR EACH ROW EXECUTE FUNCTION fail_mid_apply()`, victim)
		if s.Dialect() == "sqlite" {
			failing = fmt.Sprintf(`CREATE TRIGGER fail_mid_apply BEFORE INSERT ON unsent_events
				WHEN NEW.lead_id = %d AND (SELECT count(*) FROM stage_changes WHERE lead_id = NEW.lead_id) >= 2
				BEGIN SELECT RAISE(ABORT, 'injected failure'); END`, victim)
		}
		if _, err := db.ExecContext(t.Context(), failing); err != nil {
			t.Fatal(err)
		}
		file := sameCSV(rows)
		failed := a.applyUpload(upKey, file)
		if failed.Status != string(models.UploadFailed) || !strings.Contains(failed.raw, "injected failure") {
			t.Fatalf("apply with a failing second chunk = %s; want failed, with the database's error", failed.raw)
		}
		var second, stateless int
		err := db.QueryRowContext(t.Context(), `SELECT
			(SELECT count(*) FROM stage_changes WHERE account_id = $1 AND via_row > 1001),
			(SELECT count(*) FROM events e WHERE e.account_id = $1
				AND NOT EXISTS (SELECT 1 FROM unsent_events u WHERE u.event_id = e.id)
				AND NOT EXISTS (SELECT 1 FROM event_sends x WHERE x.event_id = e.id))`, up.ID).Scan(&second, &stateless)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.written(up.ID, leads); second != 0 || stateless != 0 || len(got.changes) != leads || got.stages["up-700"] != "qualified" {
			t.Errorf("after the failure: %d changes (%d of the second chunk), %d events without a state, up-700 at %q; want the first chunk's %d, none of the second",
				len(got.changes), second, stateless, got.stages["up-700"], leads)
		}
		noDrift(t, s)

		if _, err := db.ExecContext(t.Context(), "DROP TRIGGER fail_mid_apply"+map[bool]string{true: " ON unsent_events"}[s.Dialect() == "postgres"]); err != nil {
			t.Fatal(err)
		}
		// Recorded before: the first chunk's rows, and the second chunk's
		// replays of them.
		again := a.applyUpload(upKey, file)
		if before := leads + leads/3; again.Status != string(models.UploadDone) || again.RecordedBefore != before {
			t.Fatalf("the same file again = %s; want done, %d rows recorded before", again.raw, before)
		}
		if diff := a.written(api.ID, leads).diff(a.written(up.ID, leads)); diff != "" {
			t.Errorf("the upload wrote other rows than the stage API: %s", diff)
		}
		noDrift(t, s)
	})
}

// eachWithSQL runs fn once per database, as storetest.Each does, with a
// second connection to the same database for what the store does not do
// (a trigger that fails a write).
func eachWithSQL(t *testing.T, fn func(t *testing.T, s *store.Store, db *sql.DB)) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "test.db")
		s, err := store.Open(t.Context(), store.Options{SQLitePath: path})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if _, err := s.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		fn(t, s, openSQL(t, "sqlite", path))
	})
	t.Run("postgres", func(t *testing.T) {
		url := storetest.MigratedPostgresURL(t)
		s, err := store.Open(t.Context(), store.Options{PostgresURL: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		fn(t, s, openSQL(t, "pgx", url))
	})
}

func openSQL(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// twinAccount is an account of its own with a dry-run dataset, the
// template's stage mappings on it, and leads up-1 to up-n (emails
// upN@example.com), captured three days ago.
func (a *app) twinAccount(slug string, n int) (models.Account, string) {
	a.t.Helper()
	ctx := a.t.Context()
	acc, key := a.ingestAccount(slug, "US")
	ds := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
	if err := a.store.CreateDataset(ctx, &ds); err != nil {
		a.t.Fatal(err)
	}
	if _, err := a.store.StartStageTemplate(ctx, acc.ID, ds.ID, nil); err != nil {
		a.t.Fatal(err)
	}
	at := a.clock().Add(-72 * time.Hour).UTC().Format(time.RFC3339)
	inParallel(n, func(i int) {
		r := a.postLead(key, fmt.Sprintf(`{"external_id":"up-%d","email":"up%d@example.com","created_at":%q}`, i+1, i+1, at))
		if r.status != http.StatusCreated {
			a.t.Errorf("post lead %d = %d %s", i+1, r.status, r.raw)
		}
	})
	if a.t.Failed() {
		a.t.FailNow()
	}
	return acc, key
}

// inParallel calls fn(0) to fn(n-1) from 8 goroutines, as clients posting
// at once.
func inParallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// sameRow is a stage change as a row of the file and as the stage API's
// body.
type sameRow struct {
	externalID, email, stage string
	at                       time.Time
	value                    string
	changeID                 string
}

// sameRows are two changes of each of n leads, all the leads' first ones
// first: qualified, by external id (by email for one lead in five), with a
// change id for even leads; then won with a value for one lead in three,
// booked for another, and the first change again (a replay) for the rest.
func sameRows(now time.Time, n int) []sameRow {
	first, second := now.Add(-48*time.Hour).UTC().Truncate(time.Second), now.Add(-24*time.Hour).UTC().Truncate(time.Second)
	rows := make([]sameRow, 0, 2*n)
	key := func(i int) sameRow {
		if i%5 == 0 {
			return sameRow{email: fmt.Sprintf("up%d@example.com", i)}
		}
		return sameRow{externalID: "up-" + strconv.Itoa(i)}
	}
	for i := 1; i <= n; i++ {
		r := key(i)
		r.stage, r.at = "qualified", first
		if i%2 == 0 {
			r.changeID = "q-" + strconv.Itoa(i)
		}
		rows = append(rows, r)
	}
	for i := 1; i <= n; i++ {
		r := key(i)
		switch i % 3 {
		case 0:
			r.stage, r.at, r.value, r.changeID = "won", second, strconv.Itoa(100*(i%7+1)), "w-"+strconv.Itoa(i)
		case 1:
			r.stage, r.at = "booked", second
		default:
			r = rows[i-1]
		}
		rows = append(rows, r)
	}
	return rows
}

func (r sameRow) body() string {
	lead := fmt.Sprintf(`{"external_id":%q}`, r.externalID)
	if r.email != "" {
		lead = fmt.Sprintf(`{"email":%q}`, r.email)
	}
	b := fmt.Sprintf(`{"lead":%s,"stage":%q,"occurred_at":%q`, lead, r.stage, r.at.Format(time.RFC3339))
	if r.value != "" {
		b += fmt.Sprintf(`,"value":%s,"currency":"USD"`, r.value)
	}
	if r.changeID != "" {
		b += fmt.Sprintf(`,"change_id":%q`, r.changeID)
	}
	return b + "}"
}

func sameCSV(rows []sameRow) []byte {
	var b strings.Builder
	b.WriteString("External ID,Email,Deal Stage,Last Stage Change,Amount,Currency,Change ID\n")
	for _, r := range rows {
		cur := ""
		if r.value != "" {
			cur = "USD"
		}
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s,%s\n", r.externalID, r.email, r.stage, r.at.Format(time.RFC3339), r.value, cur, r.changeID)
	}
	return []byte(b.String())
}

// applyUpload uploads file through the API, applies its preview and
// waits until the apply ends; it returns the upload as GET then answers.
func (a *app) applyUpload(key string, file []byte) uploadReply {
	a.t.Helper()
	r := a.uploadAPI(http.MethodPost, "", key, "text/csv", file)
	if r.status != http.StatusCreated {
		a.t.Fatalf("upload = %d %s", r.status, r.raw)
	}
	id := "/" + strconv.FormatInt(r.ID, 10)
	if ap := a.uploadAPI(http.MethodPost, id+"/apply", key, "", nil); ap.status != http.StatusAccepted {
		a.t.Fatalf("apply = %d %s", ap.status, ap.raw)
	}
	var g uploadReply
	poll.Until(a.t, time.Minute, func() error {
		if g = a.uploadAPI(http.MethodGet, id, key, "", nil); g.Status == "applying" {
			return fmt.Errorf("status %s", g.Status)
		}
		return nil
	})
	return g
}

// leadID is the id of the account's lead of an external id.
func (a *app) leadID(accountID int64, externalID string) int64 {
	a.t.Helper()
	l, err := a.store.LeadByExternalID(a.t.Context(), accountID, externalID)
	if err != nil {
		a.t.Fatal(err)
	}
	return l.ID
}

// written is what the stage changes of an account's leads up-1 to
// up-leads wrote, by the leads' external ids, without the ids and times of writing that differ between
// two accounts.
type written struct {
	changes []string
	events  []string
	stages  map[string]string
}

func (a *app) written(accountID int64, leads int) written {
	a.t.Helper()
	ctx := a.t.Context()
	w := written{stages: map[string]string{}}
	ext := map[int64]string{}
	var ids []int64
	for i := 1; i <= leads; i++ {
		l, err := a.store.LeadByExternalID(ctx, accountID, "up-"+strconv.Itoa(i))
		if err != nil {
			a.t.Fatal(err)
		}
		ext[l.ID], w.stages[*l.ExternalID] = *l.ExternalID, l.Stage
		ids = append(ids, l.ID)
	}
	hist, err := a.store.StageHistories(ctx, accountID, ids)
	if err != nil {
		a.t.Fatal(err)
	}
	evs, err := a.store.LeadsEvents(ctx, accountID, ids)
	if err != nil {
		a.t.Fatal(err)
	}
	for _, id := range ids {
		for _, c := range hist[id] {
			w.changes = append(w.changes, fmt.Sprintf("%s %s at %s value %v %s change %v", ext[id], c.Stage,
				c.OccurredAt.UTC().Format(time.RFC3339Nano), deref(c.Value), c.Currency, derefS(c.ChangeID)))
		}
		for _, e := range evs[id] {
			w.events = append(w.events, fmt.Sprintf("%s %s %s at %s value %v %s filled in %v %s %q change %v", ext[id], e.EventName, e.EventID,
				e.EventTime.UTC().Format(time.RFC3339Nano), deref(e.Value), e.Currency, e.FilledIn, e.Status, e.LastError, e.StageChangeID != nil))
		}
	}
	return w
}

// diff says where o differs from w, "" when it does not.
func (w written) diff(o written) string {
	for _, p := range []struct {
		name string
		a, b []string
	}{{"stage changes", w.changes, o.changes}, {"events", w.events, o.events}} {
		for i := range max(len(p.a), len(p.b)) {
			var a, b string
			if i < len(p.a) {
				a = p.a[i]
			}
			if i < len(p.b) {
				b = p.b[i]
			}
			if a != b {
				return fmt.Sprintf("%s: %d and %d; the first that differs, %q and %q", p.name, len(p.a), len(p.b), a, b)
			}
		}
	}
	for k, v := range w.stages {
		if o.stages[k] != v {
			return fmt.Sprintf("lead %s at stage %q and %q", k, v, o.stages[k])
		}
	}
	return ""
}

func deref(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

func derefS(v *string) any {
	if v == nil {
		return nil
	}
	return *v
}

func noDrift(t *testing.T, s *store.Store) {
	t.Helper()
	if err := s.CompactCounts(context.WithoutCancel(t.Context())); err != nil {
		t.Fatal(err)
	}
	if drift, err := s.CountsDrift(t.Context()); err != nil || len(drift) > 0 {
		t.Errorf("counts drift = %v, %v; want none", drift, err)
	}
}

// A stage label and a change id holding what COPY's text format reads as
// markup (backslashes, "\." alone, "\N") and text beyond ASCII are stored
// as they were sent.
func TestStageChangeTextStoredAsSent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		label, changeID := `Closed\Won \N é`, `\.`+`\\deal\7 «ü»`
		body := fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":%q,"occurred_at":%q,"change_id":%q}`,
			label, st.at.Add(time.Hour).Format(time.RFC3339), changeID)
		if r := a.postStage(st.key, body); r.status != http.StatusCreated {
			t.Fatalf("post stage = %d %s", r.status, r.raw)
		}
		hist, err := s.StageHistories(t.Context(), st.acc.ID, []int64{st.leadID})
		if err != nil {
			t.Fatal(err)
		}
		if len(hist[st.leadID]) != 1 || hist[st.leadID][0].Stage != label || derefS(hist[st.leadID][0].ChangeID) != changeID {
			t.Errorf("stored %+v; want stage %q, change id %q", hist[st.leadID], label, changeID)
		}
	})
}

// A lead that reaches a stage a second time, at another time, records the
// change and leaves the stage's event as it was: one event, queued once.
func TestStageReachedAgainQueuesNothingTwice(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		for i, at := range []time.Time{st.at.Add(time.Hour), st.at.Add(2 * time.Hour)} {
			body := fmt.Sprintf(`{"lead":{"external_id":"crm-1"},"stage":"qualified","occurred_at":%q}`, at.Format(time.RFC3339))
			if r := a.postStage(st.key, body); r.status != http.StatusCreated {
				t.Fatalf("change %d: post stage = %d %s", i+1, r.status, r.raw)
			}
		}
		hist, err := s.StageHistories(t.Context(), st.acc.ID, []int64{st.leadID})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := s.LeadEvents(t.Context(), st.acc.ID, st.leadID)
		if err != nil {
			t.Fatal(err)
		}
		qualified := 0
		for _, e := range evs {
			if e.EventName == "QualifiedLead" {
				qualified++
			}
		}
		if len(hist[st.leadID]) != 2 || qualified != 1 {
			t.Errorf("%d changes, %d QualifiedLead events; want 2 changes, 1 event", len(hist[st.leadID]), qualified)
		}
	})
}
