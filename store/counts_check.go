package store

import (
	"context"
	"fmt"
	"strings"
)

// firstReachSQL keeps a stage change sc that is its lead's first to its
// stage (by occurred_at, then id): what stage_counts counts, as migration
// 0033's first_reach (Postgres) and first_reaches (SQLite) have it.
const firstReachSQL = `NOT EXISTS (SELECT 1 FROM stage_changes p WHERE p.lead_id = sc.lead_id AND p.stage = sc.stage
	AND (p.occurred_at, p.id) < (sc.occurred_at, sc.id))`

// countTable is a counts table and its definition as a plain GROUP BY over
// the counted tables, by the date in each account's zone: what
// CountsDrift compares the table with, and what RecountAccount counts an
// account's merged rows from. Migration 0021 keeps the tables by the same
// definitions, row by row (its count functions and triggers).
type countTable struct {
	name string
	// keys follow account_id and day; sums are the counts.
	keys, sums []string
	// definition selects account_id, day, the keys and the sums, for the
	// accounts that %s (a condition on l.account_id) keeps.
	definition string
}

var countTables = []countTable{{
	name: "lead_counts",
	keys: []string{"source", "campaign", "stage", "junk", "partial", "junk_signals"},
	sums: []string{"n"},
	definition: `SELECT l.account_id, local_day(count_bucket(l.created_at), a.timezone) AS day, l.source,
		utm_campaign(l.event_source_url) AS campaign, l.stage, l.junk, l.partial,
		CASE WHEN l.junk THEN junk_signals(l.junk_reasons) ELSE '' END AS junk_signals, COUNT(*) AS n
		FROM leads l JOIN accounts a ON a.id = l.account_id WHERE %s GROUP BY 1, 2, 3, 4, 5, 6, 7, 8`,
}, {
	name: "stage_counts",
	keys: []string{"source", "campaign", "stage", "hours"},
	sums: []string{"n"},
	// A lead's first change to each stage, by the change's own time
	// (migration 0033).
	definition: `SELECT l.account_id, local_day(count_bucket(sc.occurred_at), a.timezone) AS day, l.source,
		utm_campaign(l.event_source_url) AS campaign, sc.stage,
		(whole_seconds(sc.occurred_at) - whole_seconds(l.created_at)) / 3600 AS hours, COUNT(*) AS n
		FROM stage_changes sc JOIN leads l ON l.id = sc.lead_id JOIN accounts a ON a.id = l.account_id
		WHERE sc.stage NOT IN ('junk', 'not_junk') AND %s AND ` + firstReachSQL + `
		GROUP BY 1, 2, 3, 4, 5, 6`,
}, {
	name: "event_counts",
	keys: []string{"source", "campaign", "event_name", "status", "dataset_id"},
	sums: []string{"n", "em", "ph", "fbc", "fbp", "external_id", "lead_id", "ip", "ua"},
	definition: `SELECT l.account_id, local_day(count_bucket(l.created_at), a.timezone) AS day, l.source,
		utm_campaign(l.event_source_url) AS campaign, e.event_name,
		CASE WHEN s.event_id IS NOT NULL THEN 'sent' ELSE event_state(u.status, u.last_error) END AS status,
		e.dataset_id, COUNT(*) AS n,
		SUM(CASE WHEN l.email_hash <> '' THEN 1 ELSE 0 END) AS em,
		SUM(CASE WHEN l.phone_hash <> '' THEN 1 ELSE 0 END) AS ph,
		SUM(CASE WHEN l.fbc <> '' OR l.fbclid <> '' THEN 1 ELSE 0 END) AS fbc,
		SUM(CASE WHEN l.fbp <> '' THEN 1 ELSE 0 END) AS fbp,
		SUM(CASE WHEN COALESCE(l.external_id, '') <> '' THEN 1 ELSE 0 END) AS external_id,
		SUM(CASE WHEN l.meta_lead_id <> '' THEN 1 ELSE 0 END) AS lead_id,
		SUM(CASE WHEN l.client_ip_address <> '' THEN 1 ELSE 0 END) AS ip,
		SUM(CASE WHEN l.client_user_agent <> '' THEN 1 ELSE 0 END) AS ua
		FROM events e JOIN leads l ON l.id = e.lead_id JOIN accounts a ON a.id = l.account_id
		LEFT JOIN event_sends s ON s.event_id = e.id
		LEFT JOIN unsent_events u ON u.event_id = e.id
		WHERE (s.event_id IS NOT NULL OR u.event_id IS NOT NULL) AND %s
		GROUP BY 1, 2, 3, 4, 5, 6, 7`,
}}

// cols lists account_id, day and the keys, each prefixed with prefix.
func (t countTable) cols(prefix string) string {
	return prefix + "account_id, " + prefix + "day, " + prefix + strings.Join(t.keys, ", "+prefix)
}

// group is the GROUP BY of account_id, day and the keys, by position.
func (t countTable) group() string {
	pos := make([]string, 2+len(t.keys))
	for i := range pos {
		pos[i] = fmt.Sprint(i + 1)
	}
	return "GROUP BY " + strings.Join(pos, ", ")
}

// summed is the sums' SUMs with sign ("" or "-") as their names.
func (t countTable) summed(sign string) string {
	out := make([]string, len(t.sums))
	for i, s := range t.sums {
		out[i] = "SUM(" + sign + s + ") AS " + s
	}
	return strings.Join(out, ", ")
}

// nonzero keeps a group whose sums are not all zero.
func (t countTable) nonzero() string {
	out := make([]string, len(t.sums))
	for i, s := range t.sums {
		out[i] = "SUM(" + s + ") <> 0"
	}
	return "HAVING " + strings.Join(out, " OR ")
}

// rows sums the table's rows (merged and deltas) per key and day, for the
// accounts that cond (on c.account_id) keeps.
func (t countTable) rows(cond string) string {
	return "SELECT c.account_id, COALESCE(c.day, local_day(c.bucket, a.timezone)) AS day, c." + strings.Join(t.keys, ", c.") +
		", " + t.summed("") + " FROM " + t.name + " c JOIN accounts a ON a.id = c.account_id WHERE " + cond +
		" " + t.group() + " " + t.nonzero()
}

// CountsDrift compares the counts tables (each key's rows summed: merged
// and deltas) with their definitions over the rows there are now, and
// describes each row where they differ (none when the triggers, the merges
// and the recounts kept them). Tests call it after writing through the
// product's paths; it reads every lead, so it is no page's query.
func (s *Store) CountsDrift(ctx context.Context) ([]string, error) {
	var drift []string
	for _, t := range countTables {
		def, rows := fmt.Sprintf(t.definition, "TRUE"), t.rows("TRUE")
		for _, dir := range []struct{ name, a, b string }{
			{"missing from " + t.name, def, rows},
			{"wrong in " + t.name, rows, def},
		} {
			var found []map[string]any
			if err := s.q(ctx).Raw(dir.a + " EXCEPT " + dir.b).Scan(&found).Error; err != nil {
				return nil, wrap("counts drift", err)
			}
			for _, r := range found {
				drift = append(drift, fmt.Sprintf("%s: %v", dir.name, r))
			}
		}
	}
	return drift, nil
}

// RecountAccount counts an account's merged rows again from its leads,
// stage changes and events, as its zone says their dates are: an account
// whose zone changed calls it in the same transaction. Its deltas, which
// are by bucket, not by date, stay; the merged rows are the definition less
// the deltas there are, read in the one statement, so a delta committed
// meanwhile is counted once. On Postgres it waits for a merge under way,
// which could write rows by the old zone.
func (s *Store) RecountAccount(ctx context.Context, accountID int64) error {
	if s.dialect == "postgres" {
		if err := s.q(ctx).Exec("SELECT pg_advisory_xact_lock(7020210021)").Error; err != nil {
			return wrap("recount account", err)
		}
	}
	for _, t := range countTables {
		if err := s.q(ctx).Exec("DELETE FROM "+t.name+" WHERE account_id = ? AND NOT delta", accountID).Error; err != nil {
			return wrap("recount account", err)
		}
		deltas := "SELECT c.account_id, local_day(c.bucket, a.timezone), c." + strings.Join(t.keys, ", c.") + ", -" +
			strings.Join(t.sums, ", -") + " FROM " + t.name + " c JOIN accounts a ON a.id = c.account_id WHERE c.delta AND c.account_id = ?"
		q := "INSERT INTO " + t.name + " (" + t.cols("") + ", " + strings.Join(t.sums, ", ") + ", delta) SELECT " +
			t.cols("") + ", " + t.summed("") + ", false FROM (" + fmt.Sprintf(t.definition, "l.account_id = ?") +
			" UNION ALL " + deltas + ") x " + t.group() + " " + t.nonzero()
		if err := s.q(ctx).Exec(q, accountID, accountID).Error; err != nil {
			return wrap("recount account", err)
		}
	}
	return nil
}
