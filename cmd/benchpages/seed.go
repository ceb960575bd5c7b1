package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// campaigns are the utm_campaign values of the seeded leads' page URLs;
// one lead in five has none.
var campaigns = []string{"spring_sale", "brand_search", "retargeting", "lookalike_1pct"}

// agencyZones are the time zones of the agency's smaller accounts, in
// turn: whole, half and three-quarter hour offsets on both sides of UTC.
var agencyZones = []string{"America/Los_Angeles", "Europe/London", "Europe/Berlin", "Asia/Kolkata",
	"Australia/Sydney", "Asia/Tokyo", "America/Chicago", "America/Sao_Paulo", "Asia/Kathmandu",
	"Pacific/Auckland", "America/St_Johns", "UTC"}

// seeded is what seed made: the big account and its dataset.
type seeded struct {
	account models.Account
	dataset models.Dataset
}

// seed gives the user the big account with cfg.leads leads and
// cfg.accounts-1 smaller ones in other zones with cfg.agencyLeads each,
// all of them with the stage template's mappings on a live dataset and the
// leads' stage changes and their events; the big account and a few small
// ones have sequences. The counts tables are kept by their triggers, as
// in production.
func seed(ctx context.Context, st *store.Store, dbURL string, userID int64, cfg config) (seeded, error) {
	var s seeded
	var err error
	// Their ids in the order made: the big account first.
	s.account, s.dataset, err = seedAccount(ctx, st, userID, "bench", "Bench", "America/New_York")
	if err != nil {
		return s, err
	}
	if err := sequence(ctx, st, s.dataset, "Lead", "QualifiedLead"); err != nil {
		return s, err
	}
	if err := sequence(ctx, st, s.dataset, "QualifiedLead", "Schedule"); err != nil {
		return s, err
	}
	var small []int64
	for i := 1; i < cfg.accounts; i++ {
		slug := fmt.Sprintf("client-%03d", i)
		acc, d, err := seedAccount(ctx, st, userID, slug, fmt.Sprintf("Client %03d", i), agencyZones[(i-1)%len(agencyZones)])
		if err != nil {
			return s, err
		}
		if i%12 == 1 {
			if err := sequence(ctx, st, d, "Lead", "QualifiedLead"); err != nil {
				return s, err
			}
		}
		small = append(small, acc.ID)
	}

	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return s, err
	}
	defer db.Close()
	// The seed's leads all come from https://example.com/quote: while it
	// runs, a trigger of this schema only gives their URLs campaigns, and
	// one lead in five (not junk nor partial) a stage its changes lead to.
	if _, err := db.ExecContext(ctx, campaignTriggerSQL); err != nil {
		return s, fmt.Errorf("campaign trigger: %w", err)
	}
	start := time.Now()
	if len(small) > 0 {
		if err := benchkit.SeedLeadsOf(ctx, dbURL, small, cfg.agencyLeads); err != nil {
			return s, fmt.Errorf("seed leads: %w", err)
		}
	}
	if err := benchkit.SeedLeads(ctx, dbURL, s.account.ID, cfg.leads); err != nil {
		return s, fmt.Errorf("seed leads: %w", err)
	}
	if _, err := db.ExecContext(ctx, "DROP TRIGGER bench_campaign ON leads; DROP FUNCTION bench_campaign()"); err != nil {
		return s, err
	}
	fmt.Fprintf(os.Stderr, "benchpages: %d leads and %d in %d other accounts loaded with their events in %s\n",
		cfg.leads, cfg.agencyLeads*len(small), len(small), time.Since(start).Round(time.Second))
	start = time.Now()
	var changes, events int64
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return s, err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	// The counts trigger of stage_changes looks each lead's changes up
	// against the statement's new rows (NOT IN): under the default
	// work_mem a third of a million of them make no hash table, and the
	// one insert took over 20 minutes instead of one.
	if _, err := tx.ExecContext(ctx, "SET LOCAL work_mem = '256MB'"); err != nil {
		return s, err
	}
	if err := tx.QueryRowContext(ctx, stageChangesSQL).Scan(&changes); err != nil {
		return s, fmt.Errorf("stage changes: %w", err)
	}
	if err := tx.QueryRowContext(ctx, stageEventsSQL).Scan(&events); err != nil {
		return s, fmt.Errorf("stage events: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return s, err
	}
	// As autovacuum would have them: analyzed, their pages all-visible.
	for _, q := range []string{"VACUUM ANALYZE", "VACUUM"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return s, err
		}
	}
	fmt.Fprintf(os.Stderr, "benchpages: %d stage changes and their %d events loaded in %s\n", changes, events, time.Since(start).Round(time.Second))
	return s, nil
}

// reopen opens a schema of the database that an earlier run seeded and
// kept, migrated to this version, and finds its big account and dataset.
func reopen(ctx context.Context, database, schema string) (*store.Store, string, seeded, error) {
	var s seeded
	u, err := url.Parse(database)
	if err != nil {
		return nil, "", s, fmt.Errorf("parse database URL: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	st, err := store.Open(ctx, store.Options{PostgresURL: u.String()})
	if err != nil {
		return nil, "", s, err
	}
	if _, err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, "", s, fmt.Errorf("migrate: %w", err)
	}
	if s.account, err = st.AccountBySlug(ctx, "bench"); err != nil {
		st.Close()
		return nil, "", s, fmt.Errorf("schema %s: the bench account: %w", schema, err)
	}
	ds, err := st.Datasets(ctx, s.account.ID)
	if err != nil || len(ds) == 0 {
		st.Close()
		return nil, "", s, fmt.Errorf("schema %s: the bench dataset: %v", schema, err)
	}
	s.dataset = ds[0]
	return st, u.String(), s, nil
}

// seedAccount creates an account of the user in zone with a live dataset
// and the stage template's mappings on it.
func seedAccount(ctx context.Context, st *store.Store, userID int64, slug, name, zone string) (models.Account, models.Dataset, error) {
	acc, err := st.CreateAccount(ctx, models.Account{Slug: slug, Name: name, Timezone: zone,
		DefaultCountry: "US", Currency: "USD"}, userID)
	if err != nil {
		return acc, models.Dataset{}, err
	}
	d := models.Dataset{AccountID: acc.ID, Name: "Bench pixel", PixelID: "100000000000001", Mode: models.ModeLive, LDU: models.LDUOff}
	if err := st.CreateDataset(ctx, &d); err != nil {
		return acc, d, err
	}
	if _, err := st.StartStageTemplate(ctx, acc.ID, d.ID, nil); err != nil {
		return acc, d, fmt.Errorf("stage template: %w", err)
	}
	return acc, d, nil
}

func sequence(ctx context.Context, st *store.Store, d models.Dataset, initial, final string) error {
	return st.CreateSequence(ctx, &models.Sequence{AccountID: d.AccountID, DatasetID: d.ID, InitialEvent: initial, FinalEvent: final})
}

// campaignTriggerSQL makes benchkit.SeedLeads's lead hist-i come from
// campaign i%5 (none for 0), and leaves one in five that is neither junk
// nor partial nor won qualified, one in twenty booked.
var campaignTriggerSQL = fmt.Sprintf(`
CREATE FUNCTION bench_campaign() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	i bigint := split_part(NEW.external_id, '-', 2)::bigint;
BEGIN
	IF i %% 5 <> 0 THEN
		NEW.event_source_url := NEW.event_source_url || '?utm_source=facebook&utm_campaign=' || (ARRAY['%s', '%s', '%s', '%s'])[i %% 5];
	END IF;
	IF NEW.stage = '' AND NOT NEW.junk AND NOT NEW.partial THEN
		IF i %% 20 = 1 THEN
			NEW.stage := 'booked';
		ELSIF i %% 5 = 1 THEN
			NEW.stage := 'qualified';
		END IF;
	END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER bench_campaign BEFORE INSERT ON leads FOR EACH ROW WHEN (NEW.external_id LIKE 'hist-%%')
	EXECUTE FUNCTION bench_campaign();`, campaigns[0], campaigns[1], campaigns[2], campaigns[3])

// stageChangesSQL records the stage changes that led each lead to its
// stage: qualified, then booked, then won, a day or two apart, the first
// up to four days after the capture, none later than now. It returns how
// many.
const stageChangesSQL = `
WITH sc AS (
	INSERT INTO stage_changes (account_id, lead_id, stage, value, currency, occurred_at, created_at)
	SELECT l.account_id, l.id, s.stage, CASE WHEN s.stage = 'won' THEN 1200 + l.id % 800 END,
		CASE WHEN s.stage = 'won' THEN 'USD' ELSE '' END, t.at, t.at
	FROM leads l
	CROSS JOIN LATERAL (VALUES ('qualified', 1), ('booked', 2), ('won', 3)) AS s(stage, step)
	CROSS JOIN LATERAL (SELECT LEAST(now(), l.created_at + ((l.id % 96) + 1) * interval '1 hour'
		+ (s.step - 1) * ((l.id % 24) + 24) * interval '1 hour')) AS t(at)
	WHERE l.stage IN ('qualified', 'booked', 'won')
	  AND s.step <= CASE l.stage WHEN 'qualified' THEN 1 WHEN 'booked' THEN 2 ELSE 3 END
	ORDER BY t.at, l.id, s.step
	RETURNING 1
)
SELECT count(*) FROM sc`

// stageEventsSQL gives each stage change the event its mapping sends, as
// the stage path queues them: most sent, one in 50 failed, one in 100
// expired, those of the last hour still queued. It returns how many.
const stageEventsSQL = `
WITH ev AS (
	INSERT INTO events (account_id, dataset_id, lead_id, origin, origin_id, event_name, event_id, event_time,
		value, currency, payload, stage_change_id, created_at)
	SELECT sc.account_id, r.dataset_id, sc.lead_id, 'stage', r.id, r.event_name, 'stage-' || sc.id, sc.occurred_at,
		sc.value, sc.currency,
		'{"event_name":"' || r.event_name || '","event_time":' || extract(epoch FROM sc.occurred_at)::bigint ||
		',"event_id":"stage-' || sc.id || '","action_source":"system_generated","user_data":{"em":["' || l.email_hash ||
		'"],"ph":["' || l.phone_hash || '"]},"custom_data":{"lead_event_source":"leadsignal"}}',
		sc.id, sc.created_at
	FROM stage_changes sc
	JOIN leads l ON l.id = sc.lead_id
	JOIN send_rules r ON r.account_id = sc.account_id AND r.mode = 'stage' AND r.stage = sc.stage AND r.enabled
	ORDER BY sc.id
	RETURNING id, dataset_id, lead_id, event_time, created_at
), sent AS (
	INSERT INTO event_sends (event_id, attempts, fbtrace_id, sent_at)
	SELECT id, 1, 'AbCdEfGhIjKlMnOpQrStUvW', created_at FROM ev
	WHERE id % 50 <> 7 AND id % 100 <> 11 AND created_at < now() - interval '1 hour'
), unsent AS (
	INSERT INTO unsent_events (event_id, dataset_id, lead_id, status, event_time, next_attempt_at, attempts, last_error, updated_at)
	SELECT id, dataset_id, lead_id, s.status, event_time, created_at, s.attempts, s.error, created_at
	FROM ev, LATERAL (SELECT CASE WHEN id % 50 = 7 THEN 'failed' WHEN id % 100 = 11 THEN 'expired' ELSE 'queued' END) AS x(status),
		LATERAL (SELECT x.status, CASE x.status WHEN 'queued' THEN 0 ELSE 1 END,
			CASE x.status WHEN 'failed' THEN 'Meta refused: invalid parameter' ELSE '' END) AS s(status, attempts, error)
	WHERE id % 50 = 7 OR id % 100 = 11 OR created_at >= now() - interval '1 hour'
	RETURNING 1
)
SELECT count(*) FROM ev`
