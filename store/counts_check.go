package store

import (
	"context"
	"fmt"
)

// countDefinitions are the counts tables' definitions as plain GROUP BYs
// over the counted tables, each beside its table's rows: what
// CountsDrift compares. Migration 0021 fills and keeps the tables by the
// same definitions, row by row.
var countDefinitions = []struct{ table, definition, rows string }{{
	table: "lead_counts",
	definition: `SELECT account_id, count_bucket(created_at) AS bucket, source, utm_campaign(event_source_url) AS campaign,
		stage, junk, partial, CASE WHEN junk THEN junk_signals(junk_reasons) ELSE '' END AS junk_signals, COUNT(*) AS n
		FROM leads GROUP BY 1, 2, 3, 4, 5, 6, 7, 8`,
	rows: `SELECT account_id, bucket, source, campaign, stage, junk, partial, junk_signals, SUM(n) AS n FROM lead_counts
		GROUP BY 1, 2, 3, 4, 5, 6, 7, 8 HAVING SUM(n) <> 0`,
}, {
	table: "stage_counts",
	definition: `SELECT l.account_id, count_bucket(l.created_at) AS bucket, l.source, utm_campaign(l.event_source_url) AS campaign,
		sc.stage, (whole_seconds(sc.occurred_at) - whole_seconds(l.created_at)) / 3600 AS hours, COUNT(*) AS n
		FROM stage_changes sc JOIN leads l ON l.id = sc.lead_id
		WHERE sc.stage NOT IN ('junk', 'not_junk') GROUP BY 1, 2, 3, 4, 5, 6`,
	rows: `SELECT account_id, bucket, source, campaign, stage, hours, SUM(n) AS n FROM stage_counts
		GROUP BY 1, 2, 3, 4, 5, 6 HAVING SUM(n) <> 0`,
}, {
	table: "event_counts",
	definition: `SELECT l.account_id, count_bucket(l.created_at) AS bucket, l.source, utm_campaign(l.event_source_url) AS campaign,
		e.event_name, CASE WHEN s.event_id IS NOT NULL THEN 'sent' ELSE u.status END AS status, COUNT(*) AS n,
		SUM(CASE WHEN l.email_hash <> '' THEN 1 ELSE 0 END) AS em,
		SUM(CASE WHEN l.phone_hash <> '' THEN 1 ELSE 0 END) AS ph,
		SUM(CASE WHEN l.fbc <> '' OR l.fbclid <> '' THEN 1 ELSE 0 END) AS fbc,
		SUM(CASE WHEN l.fbp <> '' THEN 1 ELSE 0 END) AS fbp,
		SUM(CASE WHEN COALESCE(l.external_id, '') <> '' THEN 1 ELSE 0 END) AS external_id,
		SUM(CASE WHEN l.meta_lead_id <> '' THEN 1 ELSE 0 END) AS lead_id,
		SUM(CASE WHEN l.client_ip_address <> '' THEN 1 ELSE 0 END) AS ip,
		SUM(CASE WHEN l.client_user_agent <> '' THEN 1 ELSE 0 END) AS ua
		FROM events e JOIN leads l ON l.id = e.lead_id
		LEFT JOIN event_sends s ON s.event_id = e.id
		LEFT JOIN unsent_events u ON u.event_id = e.id
		WHERE s.event_id IS NOT NULL OR u.event_id IS NOT NULL
		GROUP BY 1, 2, 3, 4, 5, 6`,
	rows: `SELECT account_id, bucket, source, campaign, event_name, status, SUM(n) AS n, SUM(em) AS em, SUM(ph) AS ph,
		SUM(fbc) AS fbc, SUM(fbp) AS fbp, SUM(external_id) AS external_id, SUM(lead_id) AS lead_id, SUM(ip) AS ip, SUM(ua) AS ua
		FROM event_counts GROUP BY 1, 2, 3, 4, 5, 6 HAVING SUM(n) <> 0`,
}}

// CountsDrift compares the counts tables (each key's rows summed: merged
// and deltas) with their definitions over the rows there are now, and describes each row where they differ (none when
// the triggers kept them). Tests call it after writing through the
// product's paths; it reads every lead, so it is no page's query.
func (s *Store) CountsDrift(ctx context.Context) ([]string, error) {
	var drift []string
	for _, d := range countDefinitions {
		for _, dir := range []struct{ name, a, b string }{
			{"missing from " + d.table, d.definition, d.rows},
			{"wrong in " + d.table, d.rows, d.definition},
		} {
			var rows []map[string]any
			if err := s.q(ctx).Raw(dir.a + " EXCEPT " + dir.b).Scan(&rows).Error; err != nil {
				return nil, wrap("counts drift", err)
			}
			for _, r := range rows {
				drift = append(drift, fmt.Sprintf("%s: %v", dir.name, r))
			}
		}
	}
	return drift, nil
}
