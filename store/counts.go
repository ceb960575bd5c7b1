package store

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	sqlite "github.com/glebarez/go-sqlite"

	"github.com/leadsignal/leadsignal/migrations"
	"github.com/leadsignal/leadsignal/models"
)

// The Overview reads its numbers from three tables that triggers keep equal
// to a GROUP BY over the leads, their stage changes and their events
// (migration 0021, docs/architecture.md "Counts"): lead_counts,
// stage_counts and event_counts. Their time is the lead's capture time
// (stage_counts: the time the lead reached the stage, migration 0033) in
// 15-minute buckets, so a day or week of any time zone is a run of buckets.

// BucketSeconds is the length of a counts bucket: every time zone's offset
// is a whole number of them.
const BucketSeconds = 900

// Bucket is the counts bucket of t.
func Bucket(t time.Time) int64 { return floorDiv(t.Unix(), BucketSeconds) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// campaignRE finds a URL's first utm_campaign parameter, as the Postgres
// function utm_campaign of migration 0021 does.
var campaignRE = regexp.MustCompile(`[?&]utm_campaign=([^&#]*)`)

// Campaign is the raw value of url's first utm_campaign parameter, "" when
// it has none: the counts' campaign, and the leads' campaign filter.
func Campaign(url string) string {
	m := campaignRE.FindStringSubmatch(url)
	if m == nil {
		return ""
	}
	return m[1]
}

// zones caches the time zones Zone loads, by name.
var zones sync.Map

// Zone is the time zone named tz, UTC when there is none by that name,
// loaded once per process: time.LoadLocation reads the zone's file each
// time, and a page of 500 accounts asks for each of their zones.
func Zone(tz string) *time.Location {
	if loc, ok := zones.Load(tz); ok {
		return loc.(*time.Location)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		loc = time.UTC
	}
	zones.Store(tz, loc)
	return loc
}

// Day is the date of t in loc as days since 1970-01-01: the day of the
// counts' merged rows.
func Day(t time.Time, loc *time.Location) int64 {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// LocalDay is the date in zone tz (UTC when unknown) of counts bucket b, as
// days since 1970-01-01, as the function local_day of migration 0021 has
// it on Postgres.
func LocalDay(b int64, tz string) int64 {
	return Day(time.Unix(b*BucketSeconds, 0), Zone(tz))
}

// JunkSignals is the signals of a lead's junk reasons (JSON, a list of
// junk.Reason) joined by commas, as the counts keep them: "" for none.
func JunkSignals(reasons string) string {
	var rs []struct {
		Signal *string `json:"signal"`
	}
	if json.Unmarshal([]byte(reasons), &rs) != nil {
		return ""
	}
	var out []string
	for _, r := range rs {
		if r.Signal != nil {
			out = append(out, *r.Signal)
		}
	}
	return strings.Join(out, ",")
}

// SQLite's versions of the functions that migrations 0021 and 0036 create
// on Postgres, for its triggers and the campaign filter.
func init() {
	fns := []struct {
		name string
		nArg int32
		fn   func(args []driver.Value) (driver.Value, error)
	}{
		{"utm_campaign", 1, func(args []driver.Value) (driver.Value, error) {
			s, _ := sqliteText(args[0])
			return Campaign(s), nil
		}},
		{"junk_signals", 1, func(args []driver.Value) (driver.Value, error) {
			s, _ := sqliteText(args[0])
			return JunkSignals(s), nil
		}},
		{"local_day", 2, func(args []driver.Value) (driver.Value, error) {
			b, ok := args[0].(int64)
			if !ok {
				return nil, fmt.Errorf("local_day: bucket %T", args[0])
			}
			tz, _ := sqliteText(args[1])
			return LocalDay(b, tz), nil
		}},
		{"whole_seconds", 1, func(args []driver.Value) (driver.Value, error) {
			t, err := sqliteTime(args[0])
			if err != nil {
				return nil, err
			}
			return t.Unix(), nil
		}},
		{"count_bucket", 1, func(args []driver.Value) (driver.Value, error) {
			t, err := sqliteTime(args[0])
			if err != nil {
				return nil, err
			}
			return Bucket(t), nil
		}},
		// event_counts' state (migration 0036): the state people read.
		{"event_state", 2, func(args []driver.Value) (driver.Value, error) {
			status, _ := sqliteText(args[0])
			reason, _ := sqliteText(args[1])
			return string(models.Event{Status: models.EventStatus(status), LastError: reason}.State()), nil
		}},
	}
	for _, f := range fns {
		err := sqlite.RegisterDeterministicScalarFunction(f.name, f.nArg, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			return f.fn(args)
		})
		if err != nil {
			panic(fmt.Sprintf("store: register sqlite function %s: %v", f.name, err))
		}
	}
}

func sqliteText(v driver.Value) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case []byte:
		return string(v), true
	}
	return "", false
}

// sqliteTimeLayouts are the ways a time is stored in SQLite: the driver's
// own first.
var sqliteTimeLayouts = []string{
	"2006-01-02 15:04:05.999999999-07:00",
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
}

func sqliteTime(v driver.Value) (time.Time, error) {
	switch v := v.(type) {
	case time.Time:
		return v, nil
	case int64:
		return time.Unix(v, 0), nil
	}
	s, ok := sqliteText(v)
	if !ok {
		return time.Time{}, fmt.Errorf("not a time: %T", v)
	}
	s = strings.TrimSpace(s)
	for _, l := range sqliteTimeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a time: %q", s)
}

// DayStart is the first instant of the date y-m-d in loc (normalised as
// time.Date does): its midnight, or, in a zone whose clocks skip midnight
// (Chile, Cuba, Lebanon...), the first time that exists on that date.
// Days and weeks are whole runs of counts buckets from one DayStart to the
// next.
func DayStart(y int, m time.Month, d int, loc *time.Location) time.Time {
	noon := time.Date(y, m, d, 12, 0, 0, 0, loc)
	y, m, d = noon.Date()
	t := time.Date(y, m, d, 0, 0, 0, 0, loc)
	// A midnight that does not exist may become the day before's last
	// hour: the day starts at the first quarter hour of its date.
	for {
		if ty, tm, td := t.Date(); ty == y && tm == m && td == d {
			return t
		}
		t = t.Add(BucketSeconds * time.Second)
	}
}

// AddDays is the start of the date days after t's date in loc.
func AddDays(t time.Time, days int, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return DayStart(y, m, d+days, loc)
}

// LastDay is the date of the last instant before t in loc, as the leads
// list's "to" takes it: the day that the range [from, t) ends with.
func LastDay(t time.Time, loc *time.Location) string {
	return t.Add(-time.Nanosecond).In(loc).Format("2006-01-02")
}

// Span is a time range [From, To) of an account's leads, counted by
// capture time: whole days of the account's zone.
type Span struct {
	AccountID int64
	From, To  time.Time
	// Loc is the account's zone, in which From and To are the starts of
	// days (DayStart); nil is UTC.
	Loc *time.Location
}

// days are the span's dates, [from, to), as Day has them.
func (sp Span) days() (from, to int64) {
	loc := sp.Loc
	if loc == nil {
		loc = time.UTC
	}
	return Day(sp.From, loc), Day(sp.To, loc)
}

// CountFilter narrows counts to leads of one source or campaign ("" for
// any).
type CountFilter struct {
	Source   models.Source
	Campaign string
	// NoDelays sums the stage changes over their delays (StageDelay.Hours
	// is 0): only the funnel's medians read them.
	NoDelays bool
	// ByStatus sums the events by status alone (EventCount's Source,
	// EventName, DatasetID and Keys are zero) and the leads over their junk
	// signals (LeadCount.JunkSignals is ""): the agency overview's figures
	// of hundreds of accounts need no more, and far fewer rows.
	ByStatus bool
}

// LeadCount is how many leads of a span are in one state now.
type LeadCount struct {
	Span    int
	Stage   string
	Junk    bool
	Partial bool
	// JunkSignals is the signals of a junk lead, joined by commas.
	JunkSignals string
	N           int64
}

// StageDelay is how many leads first reached Stage (as a change wrote it)
// in a span, Hours (whole) after their capture: stage_counts are by the
// time of the change, not of the lead's capture (migration 0033).
type StageDelay struct {
	Span  int
	Stage string
	Hours int64
	N     int64
}

// EventCount is how many events named EventName, for the destination
// DatasetID, of the leads of a span have Status now, and how many of them
// carry each match key.
type EventCount struct {
	Span      int
	Source    models.Source
	EventName string
	Status    models.EventStatus
	DatasetID int64
	N         int64
	Keys      KeyCounts `gorm:"embedded"`
}

// KeyCounts counts events by the match keys their leads carry.
type KeyCounts struct {
	Em         int64 `gorm:"column:em"`
	Ph         int64 `gorm:"column:ph"`
	FBC        int64 `gorm:"column:fbc"`
	FBP        int64 `gorm:"column:fbp"`
	ExternalID int64 `gorm:"column:external_id"`
	LeadID     int64 `gorm:"column:lead_id"`
	IP         int64 `gorm:"column:ip"`
	UA         int64 `gorm:"column:ua"`
}

// Counts is what the counts tables hold for some spans of an account.
type Counts struct {
	Leads  []LeadCount
	Stages []StageDelay
	Events []EventCount
}

// BySpan splits c into the rows of each of n spans, each row keeping its
// span's index: a page of many spans (the agency overview's 500 accounts)
// sums each span's rows rather than every row for each span.
func (c Counts) BySpan(n int) []Counts {
	out := make([]Counts, n)
	for i, rows := range bySpan(c.Leads, n, func(r *LeadCount) int { return r.Span }) {
		out[i].Leads = rows
	}
	for i, rows := range bySpan(c.Stages, n, func(r *StageDelay) int { return r.Span }) {
		out[i].Stages = rows
	}
	for i, rows := range bySpan(c.Events, n, func(r *EventCount) int { return r.Span }) {
		out[i].Events = rows
	}
	return out
}

// bySpan splits rows into the rows of each of n spans (span says a row's),
// in their order, all of them in one array: a slice of it per span, where
// appending row by row would grow hundreds of small slices.
func bySpan[T any](rows []T, n int, span func(*T) int) [][]T {
	start := make([]int, n+1) // span i's rows are all[start[i]:start[i+1]]
	for k := range rows {
		if i := span(&rows[k]); i >= 0 && i < n {
			start[i+1]++
		}
	}
	for i := range n {
		start[i+1] += start[i]
	}
	all := make([]T, start[n])
	next := slices.Clone(start[:n])
	for k := range rows {
		if i := span(&rows[k]); i >= 0 && i < n {
			all[next[i]] = rows[k]
			next[i]++
		}
	}
	out := make([][]T, n)
	for i := range out {
		if start[i] < start[i+1] {
			out[i] = all[start[i]:start[i+1]:start[i+1]]
		}
	}
	return out
}

// Counts reads the counts of each of spans (spans of one account must not
// overlap), with f, each row naming its span by index: the leads captured
// in it and their events, and the stages leads reached in it. One query per
// table reads every span, of one account or many: the spans are a list of
// rows (countSpans) that the counts rows join by account and time, so
// each span costs a range of the counts' indexes however many there are.
func (s *Store) Counts(ctx context.Context, spans []Span, f CountFilter) (Counts, error) {
	var c Counts
	if len(spans) == 0 {
		return c, nil
	}
	spanRows, args := s.countSpans(spans)
	where, whereArgs := "", []any{}
	if f.Source != "" {
		where += " AND c.source = ?"
		whereArgs = append(whereArgs, f.Source)
	}
	if f.Campaign != "" {
		where += " AND c.campaign = ?"
		whereArgs = append(whereArgs, f.Campaign)
	}
	// Merged rows are in a span by their day, deltas by their bucket: each
	// half reads its own partial index (the counts' key, the deltas'),
	// and only the columns it groups by (fields) and sums (summed), which
	// the key holds (migration 0045): Postgres reads a span's merged rows
	// from the index alone. The sums are cast back to bigint: Postgres
	// sums bigints as numeric, which a client decodes through
	// arbitrary-precision arithmetic.
	read := func(fields, summed, sums, table string, scan func(rowScanner) error) error {
		join := spanJoin[s.dialect]
		q := "WITH spans (span, account_id, from_day, to_day, from_bucket, to_bucket) AS (" + spanRows + ")" +
			" SELECT span, " + fields + ", " + sums + " FROM (" +
			"SELECT s.span, c.* FROM " + fmt.Sprintf(join, fields+", "+summed, table, "NOT c.delta AND c.day >= s.from_day AND c.day < s.to_day"+where) +
			" UNION ALL SELECT s.span, c.* FROM " + fmt.Sprintf(join, fields+", "+summed, table, "c.delta AND c.bucket >= s.from_bucket AND c.bucket < s.to_bucket"+where) +
			") x GROUP BY span, " + fields
		return s.eachRow(ctx, q, append(append(append([]any{}, args...), whereArgs...), whereArgs...), scan)
	}
	const n = "CAST(SUM(n) AS bigint) AS n"
	// Each read scans its rows (thousands for the agency overview, through
	// eachRow) into one value, through one list of its fields, and appends
	// copies.
	var lead LeadCount
	leadFields, leadDest := "stage, junk, partial, junk_signals", []any{&lead.Span, &lead.Stage, &lead.Junk, &lead.Partial, &lead.JunkSignals, &lead.N}
	if f.ByStatus {
		leadFields, leadDest = "stage, junk, partial", []any{&lead.Span, &lead.Stage, &lead.Junk, &lead.Partial, &lead.N}
	}
	err := read(leadFields, "n", n, "lead_counts", func(rows rowScanner) error {
		err := rows.Scan(leadDest...)
		c.Leads = append(c.Leads, lead)
		return err
	})
	var stage StageDelay
	stageDest := []any{&stage.Span, &stage.Stage, &stage.Hours, &stage.N}
	scanStage := func(rows rowScanner) error {
		err := rows.Scan(stageDest...)
		c.Stages = append(c.Stages, stage)
		return err
	}
	switch {
	case err != nil:
	case f.NoDelays:
		err = read("stage", "n", "0 AS hours, "+n, "stage_counts", scanStage)
	default:
		err = read("stage, hours", "n", n, "stage_counts", scanStage)
	}
	var ev EventCount
	switch {
	case err != nil:
	case f.ByStatus:
		dest := []any{&ev.Span, &ev.Status, &ev.N}
		err = read("status", "n", n, "event_counts", func(rows rowScanner) error {
			err := rows.Scan(dest...)
			c.Events = append(c.Events, ev)
			return err
		})
	default:
		k := &ev.Keys
		dest := []any{&ev.Span, &ev.Source, &ev.EventName, &ev.Status, &ev.DatasetID, &ev.N,
			&k.Em, &k.Ph, &k.FBC, &k.FBP, &k.ExternalID, &k.LeadID, &k.IP, &k.UA}
		err = read("source, event_name, status, dataset_id", "n, em, ph, fbc, fbp, external_id, lead_id, ip, ua", n+`,
			CAST(SUM(em) AS bigint) AS em, CAST(SUM(ph) AS bigint) AS ph, CAST(SUM(fbc) AS bigint) AS fbc,
			CAST(SUM(fbp) AS bigint) AS fbp, CAST(SUM(external_id) AS bigint) AS external_id,
			CAST(SUM(lead_id) AS bigint) AS lead_id, CAST(SUM(ip) AS bigint) AS ip, CAST(SUM(ua) AS bigint) AS ua`,
			"event_counts", func(rows rowScanner) error {
				err := rows.Scan(dest...)
				c.Events = append(c.Events, ev)
				return err
			})
	}
	return c, wrap("counts", err)
}

// countSpans is a SELECT of spans' rows, (span, account_id, from_day,
// to_day, from_bucket, to_bucket), with its arguments: the span's index,
// its days [from, to) as the merged rows have them (Day) and its buckets as
// the deltas have them. The rows go as a few arguments however many spans
// there are, as idList passes ids, rather than as six bound values a span:
// on Postgres one array per column, which unnest reads side by side, on
// SQLite one JSON array of arrays (countSpansSQL).
func (s *Store) countSpans(spans []Span) (string, []any) {
	rows := make([][6]int64, len(spans))
	for i, sp := range spans {
		fromDay, toDay := sp.days()
		rows[i] = [6]int64{int64(i), sp.AccountID, fromDay, toDay, Bucket(sp.From), Bucket(sp.To)}
	}
	if s.dialect == migrations.Postgres {
		args := make([]any, 6)
		col := make([]int64, len(rows))
		for k := range args {
			for i, r := range rows {
				col[i] = r[k]
			}
			args[k] = intArray('{', col, '}')
		}
		return countSpansSQL[s.dialect], args
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, r := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(intArray('[', r[:], ']'))
	}
	b.WriteByte(']')
	return countSpansSQL[s.dialect], []any{b.String()}
}

// spanJoin joins the spans s to the columns (the first %s) of the rows c
// of a counts table (the second) of the span's account that the condition
// (the third) holds for, per dialect. On Postgres each span reads its own
// account's rows through the table's index (a lateral subquery the planner
// may not flatten): a plain join lets the planner hash the spans and read
// every account's rows, so one account's Overview would cost as much as
// all accounts' counts. SQLite loops over the spans and their rows by
// index as it is.
var spanJoin = map[string]string{
	migrations.Postgres: "spans s CROSS JOIN LATERAL (SELECT %s FROM %s c WHERE c.account_id = s.account_id AND %s OFFSET 0) c",
	migrations.SQLite:   "spans s JOIN (SELECT account_id, delta, day, bucket, source, campaign, %s FROM %s) c ON c.account_id = s.account_id AND %s",
}

// countSpansSQL reads countSpans' arguments into rows, per dialect.
var countSpansSQL = map[string]string{
	migrations.Postgres: `SELECT CAST(span AS integer), account_id, from_day, to_day, from_bucket, to_bucket
		FROM unnest(CAST(? AS bigint[]), CAST(? AS bigint[]), CAST(? AS bigint[]), CAST(? AS bigint[]),
			CAST(? AS bigint[]), CAST(? AS bigint[])) AS s (span, account_id, from_day, to_day, from_bucket, to_bucket)`,
	migrations.SQLite: `SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'),
		json_extract(value, '$[3]'), json_extract(value, '$[4]'), json_extract(value, '$[5]') FROM json_each(?)`,
}

// HasLeads reports whether an account has any lead: its counts have a row
// from its first lead on (leads are never deleted).
func (s *Store) HasLeads(ctx context.Context, accountID int64) (bool, error) {
	var ids []int64
	err := s.q(ctx).Raw(`SELECT account_id FROM lead_counts WHERE account_id = ? LIMIT 1`, accountID).Scan(&ids).Error
	return len(ids) > 0, wrap("has leads", err)
}

// LeadStages lists the stages an account's leads are at, as they are
// written: a stage change keeps its caller's spelling ("Qualified").
func (s *Store) LeadStages(ctx context.Context, accountID int64) ([]string, error) {
	var out []string
	err := s.q(ctx).Raw(`SELECT stage FROM lead_counts WHERE account_id = ? AND stage <> ''
		GROUP BY stage HAVING SUM(n) > 0 ORDER BY stage`, accountID).Scan(&out).Error
	return out, wrap("lead stages", err)
}

// Reach is a stage reached in a time range: its labels as stage changes
// wrote them (ReachedLabels lists those there are), and [From, To).
type Reach struct {
	Labels   []string
	From, To time.Time
}

// ReachedLabels lists the stages an account's leads reached in
// [from, to) (or a day either side of it, in some zone), as their changes
// wrote them (a CRM's label before it became an alias, say). A zero to is
// no end.
func (s *Store) ReachedLabels(ctx context.Context, accountID int64, from, to time.Time) ([]string, error) {
	if to.IsZero() {
		to = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	var out []string
	err := s.q(ctx).Raw(`SELECT stage FROM stage_counts WHERE account_id = ?
		AND (NOT delta AND day >= ? AND day <= ? OR delta AND bucket >= ? AND bucket < ?)
		GROUP BY stage HAVING SUM(n) > 0 ORDER BY stage`,
		accountID, Day(from, time.UTC)-1, Day(to, time.UTC)+1, Bucket(from), Bucket(to)).Scan(&out).Error
	return out, wrap("reached labels", err)
}

// Campaigns lists the campaigns of an account's leads captured since
// since (or a day before it, in some zone), most leads first.
func (s *Store) Campaigns(ctx context.Context, accountID int64, since time.Time, limit int) ([]string, error) {
	var out []string
	err := s.q(ctx).Raw(`SELECT campaign FROM lead_counts WHERE account_id = ? AND campaign <> ''
		AND (NOT delta AND day >= ? OR delta AND bucket >= ?)
		GROUP BY campaign HAVING SUM(n) > 0 ORDER BY SUM(n) DESC, campaign LIMIT ?`,
		accountID, Day(since, time.UTC)-1, Bucket(since), limit).Scan(&out).Error
	return out, wrap("campaigns", err)
}

// LastStageUpdates is when each account last recorded a stage change (not
// a junk marker); an account with none is missing.
func (s *Store) LastStageUpdates(ctx context.Context, accountIDs []int64) (map[int64]time.Time, error) {
	out := map[int64]time.Time{}
	in, list := s.idList("a.id", accountIDs)
	rows, err := s.q(ctx).Raw(`SELECT a.id, (SELECT MAX(created_at) FROM stage_changes sc WHERE sc.account_id = a.id
		AND sc.stage NOT IN ('junk', 'not_junk')) AS last FROM accounts a WHERE `+in, list).Rows()
	if err != nil {
		return nil, wrap("last stage updates", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		// SQLite returns an aggregate's time as text: it has no declared
		// type for the driver to convert it by.
		var last any
		if err := rows.Scan(&id, &last); err != nil {
			return nil, wrap("last stage updates", err)
		}
		if last == nil {
			continue
		}
		t, err := sqliteTime(last)
		if err != nil {
			return nil, wrap("last stage updates", err)
		}
		out[id] = t
	}
	return out, wrap("last stage updates", rows.Err())
}

// compactSQLite merges the deltas of the counts tables, as the Postgres
// function compact_counts of migration 0021 does. SQLite has one writer,
// so no delta can arrive between the merge and the delete.
var compactSQLite = []string{
	`INSERT INTO lead_counts (account_id, day, source, campaign, stage, junk, partial, junk_signals, n, delta)
	SELECT c.account_id, local_day(c.bucket, a.timezone), source, campaign, stage, junk, partial, junk_signals, SUM(n), false
	FROM lead_counts c JOIN accounts a ON a.id = c.account_id WHERE delta
	GROUP BY 1, 2, 3, 4, 5, 6, 7, 8 HAVING SUM(n) <> 0
	ON CONFLICT (account_id, day, source, campaign, stage, junk, partial, junk_signals) WHERE NOT delta
	DO UPDATE SET n = n + excluded.n`,
	`DELETE FROM lead_counts WHERE delta`,
	`INSERT INTO stage_counts (account_id, day, source, campaign, stage, hours, n, delta)
	SELECT c.account_id, local_day(c.bucket, a.timezone), source, campaign, stage, hours, SUM(n), false
	FROM stage_counts c JOIN accounts a ON a.id = c.account_id WHERE delta
	GROUP BY 1, 2, 3, 4, 5, 6 HAVING SUM(n) <> 0
	ON CONFLICT (account_id, day, source, campaign, stage, hours) WHERE NOT delta DO UPDATE SET n = n + excluded.n`,
	`DELETE FROM stage_counts WHERE delta`,
	`INSERT INTO event_counts (account_id, day, source, campaign, event_name, status, dataset_id,
		n, em, ph, fbc, fbp, external_id, lead_id, ip, ua, delta)
	SELECT c.account_id, local_day(c.bucket, a.timezone), source, campaign, event_name, status, dataset_id, SUM(n), SUM(em),
		SUM(ph), SUM(fbc), SUM(fbp), SUM(external_id), SUM(lead_id), SUM(ip), SUM(ua), false
	FROM event_counts c JOIN accounts a ON a.id = c.account_id WHERE delta GROUP BY 1, 2, 3, 4, 5, 6, 7
	HAVING SUM(n) <> 0 OR SUM(em) <> 0 OR SUM(ph) <> 0 OR SUM(fbc) <> 0 OR SUM(fbp) <> 0 OR SUM(external_id) <> 0
		OR SUM(lead_id) <> 0 OR SUM(ip) <> 0 OR SUM(ua) <> 0
	ON CONFLICT (account_id, day, source, campaign, event_name, status, dataset_id) WHERE NOT delta DO UPDATE SET
		n = n + excluded.n, em = em + excluded.em, ph = ph + excluded.ph, fbc = fbc + excluded.fbc,
		fbp = fbp + excluded.fbp, external_id = external_id + excluded.external_id,
		lead_id = lead_id + excluded.lead_id, ip = ip + excluded.ip, ua = ua + excluded.ua`,
	`DELETE FROM event_counts WHERE delta`,
}

// CompactCounts merges the counts tables' delta rows into one row per key,
// so that the Overview reads few rows. The triggers only ever insert
// deltas: writers never wait for one another on a counter. On Postgres a
// replica that finds another merging leaves it to that one. serve runs it
// every few seconds (internal/upkeep).
func (s *Store) CompactCounts(ctx context.Context) error {
	return wrap("compact counts", s.Tx(ctx, func(tx *Store) error {
		if s.dialect == "postgres" {
			return tx.q(ctx).Exec("SELECT compact_counts()").Error
		}
		for _, q := range compactSQLite {
			if err := tx.q(ctx).Exec(q).Error; err != nil {
				return err
			}
		}
		return nil
	}))
}
