package store

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// Postgres takes a batch of new rows as one array per column, unnested
// into rows: the statement's text is the same for any number of rows, so
// it is parsed and planned once per connection, and each row costs a few
// array elements instead of a few dozen bound parameters.

// column is a typed column of an unnest insert: its name and Postgres type.
type column struct{ name, pgType string }

// textColumn is a text column of an unnest insert and how to read it.
type textColumn[T any] struct {
	name  string
	value func(*T) string
}

// unnestInsert writes "INSERT INTO table (...) SELECT * FROM unnest(...)"
// with one array parameter per column: the typed ones, then the text ones.
func unnestInsert[T any](table string, typed []column, text []textColumn[T]) string {
	var names, params []string
	for _, c := range typed {
		names = append(names, c.name)
		params = append(params, fmt.Sprintf("CAST($%d AS %s[])", len(params)+1, c.pgType))
	}
	for _, c := range text {
		names = append(names, c.name)
		params = append(params, fmt.Sprintf("CAST($%d AS text[])", len(params)+1))
	}
	return fmt.Sprintf("INSERT INTO %s (%s) SELECT * FROM unnest(%s)",
		table, strings.Join(names, ", "), strings.Join(params, ", "))
}

// unnestUpdate writes "UPDATE table SET ... FROM unnest(...)" with the
// parameters of unnestInsert for the same columns: each row updates the
// table's row of the same keys, every column but the keys and keep.
func unnestUpdate[T any](table string, typed []column, text []textColumn[T], keys, keep []string) string {
	var names, params, set, where []string
	for _, c := range typed {
		names = append(names, c.name)
		params = append(params, fmt.Sprintf("CAST($%d AS %s[])", len(params)+1, c.pgType))
	}
	for _, c := range text {
		names = append(names, c.name)
		params = append(params, fmt.Sprintf("CAST($%d AS text[])", len(params)+1))
	}
	for _, n := range names {
		switch {
		case slices.Contains(keys, n):
			where = append(where, fmt.Sprintf("t.%s = u.%s", n, n))
		case !slices.Contains(keep, n):
			set = append(set, fmt.Sprintf("%s = u.%s", n, n))
		}
	}
	return fmt.Sprintf("UPDATE %s t SET %s FROM unnest(%s) AS u(%s) WHERE %s", table, strings.Join(set, ", "),
		strings.Join(params, ", "), strings.Join(names, ", "), strings.Join(where, " AND "))
}

// textArgs appends the arrays of the text columns of rows to args.
func textArgs[T any](args []any, rows []T, text []textColumn[T]) []any {
	for _, c := range text {
		vs := make([]string, len(rows))
		for i := range rows {
			vs[i] = c.value(&rows[i])
		}
		args = append(args, vs)
	}
	return args
}

var leadText = []textColumn[models.Lead]{
	{"source", func(l *models.Lead) string { return string(l.Source) }},
	{"email", func(l *models.Lead) string { return l.Email }},
	{"phone", func(l *models.Lead) string { return l.Phone }},
	{"phone_e164", func(l *models.Lead) string { return l.PhoneE164 }},
	{"phone_country", func(l *models.Lead) string { return l.PhoneCountry }},
	{"first_name", func(l *models.Lead) string { return l.FirstName }},
	{"last_name", func(l *models.Lead) string { return l.LastName }},
	{"city", func(l *models.Lead) string { return l.City }},
	{"state", func(l *models.Lead) string { return l.State }},
	{"zip", func(l *models.Lead) string { return l.Zip }},
	{"country", func(l *models.Lead) string { return l.Country }},
	{"gender", func(l *models.Lead) string { return l.Gender }},
	{"date_of_birth", func(l *models.Lead) string { return l.DateOfBirth }},
	{"message", func(l *models.Lead) string { return l.Message }},
	{"fbclid", func(l *models.Lead) string { return l.FBCLID }},
	{"fbc", func(l *models.Lead) string { return l.FBC }},
	{"fbp", func(l *models.Lead) string { return l.FBP }},
	{"client_ip_address", func(l *models.Lead) string { return l.ClientIP }},
	{"client_user_agent", func(l *models.Lead) string { return l.ClientUserAgent }},
	{"event_source_url", func(l *models.Lead) string { return l.EventSourceURL }},
	{"honeypot", func(l *models.Lead) string { return l.Honeypot }},
	{"meta_lead_id", func(l *models.Lead) string { return l.MetaLeadID }},
	{"fields", func(l *models.Lead) string { return l.Fields }},
	{"match_keys", func(l *models.Lead) string { return l.MatchKeys }},
	{"email_hash", func(l *models.Lead) string { return l.EmailHash }},
	{"phone_hash", func(l *models.Lead) string { return l.PhoneHash }},
	{"junk_reasons", func(l *models.Lead) string { return l.JunkReasons }},
	{"junk_override", func(l *models.Lead) string { return l.JunkOverride }},
	{"stage", func(l *models.Lead) string { return l.Stage }},
}

var leadTyped = []column{
	{"id", "bigint"}, {"account_id", "bigint"}, {"external_id", "text"}, {"partial", "boolean"}, {"junk", "boolean"},
	{"test", "boolean"}, {"fill_seconds", "double precision"}, {"created_at", "timestamptz"}, {"received_at", "timestamptz"},
	{"updated_at", "timestamptz"},
}

var insertLeadsSQL = unnestInsert("leads", leadTyped, leadText)

// completeLeadsSQL writes completed partial leads over their rows, as
// SaveLead does.
var completeLeadsSQL = unnestUpdate("leads", leadTyped, leadText, []string{"id", "account_id"}, []string{"received_at"})

// leadArgs are the column arrays of insertLeadsSQL and completeLeadsSQL.
func leadArgs(ls []models.Lead) []any {
	n := len(ls)
	id, account, external, partial, junk, test := make([]int64, n), make([]int64, n), make([]*string, n), make([]bool, n), make([]bool, n), make([]bool, n)
	fill, created, received, updated := make([]*float64, n), make([]time.Time, n), make([]time.Time, n), make([]time.Time, n)
	for i := range ls {
		l := &ls[i]
		id[i], account[i], external[i], partial[i], junk[i], test[i], fill[i] = l.ID, l.AccountID, l.ExternalID, l.Partial, l.Junk, l.Test, l.FillSeconds
		created[i], received[i], updated[i] = l.CreatedAt.UTC(), l.ReceivedAt.UTC(), l.UpdatedAt.UTC()
	}
	return textArgs([]any{id, account, external, partial, junk, test, fill, created, received, updated}, ls, leadText)
}

var eventText = []textColumn[models.Event]{
	{"origin", func(e *models.Event) string { return e.Origin }},
	{"event_name", func(e *models.Event) string { return e.EventName }},
	{"event_id", func(e *models.Event) string { return e.EventID }},
	{"currency", func(e *models.Event) string { return e.Currency }},
	{"action_source", func(e *models.Event) string { return e.ActionSource }},
	{"test_event_code", func(e *models.Event) string { return e.TestEventCode }},
	{"payload", func(e *models.Event) string { return e.Payload }},
	{"lead_event_source", func(e *models.Event) string { return e.LeadEventSource }},
}

var eventTyped = []column{
	{"account_id", "bigint"}, {"dataset_id", "bigint"}, {"lead_id", "bigint"}, {"origin_id", "bigint"},
	{"value", "double precision"}, {"event_time", "timestamptz"}, {"payload_stamp", "bigint"},
	{"created_at", "timestamptz"}, {"stage_change_id", "bigint"}, {"filled_in", "boolean"},
}

// insertEventsSQL inserts new events and gives each its state, due when
// it was created; an event already stored is left as it is. Its parameters
// are the events' columns, then two arrays more, each event's status and
// last error, matched to it by dataset and event id ($2 and the event_id
// column's array). Of several given events with the same dataset and event
// id, the first is stored and gives the state: the same event made twice
// never fails the write.
var insertEventsSQL = "WITH ev AS (" + unnestInsert("events", eventTyped, eventText) +
	fmt.Sprintf(` ON CONFLICT (dataset_id, event_id) DO NOTHING RETURNING id, dataset_id, lead_id, event_id, event_time, created_at)
INSERT INTO unsent_events (event_id, dataset_id, lead_id, status, event_time, next_attempt_at, last_error, updated_at)
SELECT ev.id, ev.dataset_id, ev.lead_id, s.status, ev.event_time, ev.created_at, s.last_error, ev.created_at
FROM ev JOIN (SELECT DISTINCT ON (dataset_id, event_id) dataset_id, event_id, status, last_error
	FROM unnest(CAST($2 AS bigint[]), CAST($%d AS text[]), CAST($%d AS text[]), CAST($%d AS text[]))
		WITH ORDINALITY AS u(dataset_id, event_id, status, last_error, n)
	ORDER BY dataset_id, event_id, n) AS s ON s.dataset_id = ev.dataset_id AND s.event_id = ev.event_id`,
		len(eventTyped)+3, len(eventTyped)+len(eventText)+1, len(eventTyped)+len(eventText)+2)

// eventArgs are the parameters of insertEventsSQL.
func eventArgs(evs []models.Event) []any {
	n := len(evs)
	account, dataset, lead, origin := make([]int64, n), make([]int64, n), make([]int64, n), make([]*int64, n)
	value, at, stamp, created := make([]*float64, n), make([]time.Time, n), make([]int64, n), make([]time.Time, n)
	change, filledIn := make([]*int64, n), make([]bool, n)
	status, lastError := make([]string, n), make([]string, n)
	for i := range evs {
		e := &evs[i]
		account[i], dataset[i], lead[i], origin[i], value[i] = e.AccountID, e.DatasetID, e.LeadID, e.OriginID, e.Value
		at[i], stamp[i], created[i], change[i], filledIn[i] = e.EventTime.UTC(), e.PayloadStamp, e.CreatedAt.UTC(), e.StageChangeID, e.FilledIn
		status[i], lastError[i] = string(e.Status), e.LastError
	}
	args := textArgs([]any{account, dataset, lead, origin, value, at, stamp, created, change, filledIn}, evs, eventText)
	return append(args, status, lastError)
}
