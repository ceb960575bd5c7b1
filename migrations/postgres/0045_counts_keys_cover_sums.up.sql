-- The counts' keys hold the sums too (INCLUDE), so that the Overview, the
-- agency overview and the send log's counts read a span's merged rows from
-- the key alone (an index-only scan), not each row from the table: a row
-- of another day or account sits on every page of the table, so reading
-- the rows themselves costs a page a row.
--
-- A merge's update of a sum is then no longer HOT (it writes the key
-- anew); the merge touches only the rows of the deltas it folds in.
-- Each new key is built before the old one goes, under the name the old
-- one had, with the same columns and predicate: the merge's ON CONFLICT
-- finds it by those.
CREATE UNIQUE INDEX lead_counts_key_new ON lead_counts (account_id, day, source, campaign, stage, junk, partial, junk_signals)
    INCLUDE (n) WHERE NOT delta;
DROP INDEX lead_counts_key;
ALTER INDEX lead_counts_key_new RENAME TO lead_counts_key;

CREATE UNIQUE INDEX stage_counts_key_new ON stage_counts (account_id, day, source, campaign, stage, hours)
    INCLUDE (n) WHERE NOT delta;
DROP INDEX stage_counts_key;
ALTER INDEX stage_counts_key_new RENAME TO stage_counts_key;

CREATE UNIQUE INDEX event_counts_key_new ON event_counts (account_id, day, source, campaign, event_name, status, dataset_id)
    INCLUDE (n, em, ph, fbc, fbp, external_id, lead_id, ip, ua) WHERE NOT delta;
DROP INDEX event_counts_key;
ALTER INDEX event_counts_key_new RENAME TO event_counts_key;
