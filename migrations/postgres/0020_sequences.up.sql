-- Sequences (issue 20): per dataset, an initial and a
-- final event. A lead's sequence is complete when its final event is later
-- than its initial one; the Stages page counts complete sequences per week
-- against Meta's learning threshold (store.SequenceWeeks).
CREATE TABLE sequences (
    id            bigserial PRIMARY KEY,
    account_id    bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    dataset_id    bigint NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    initial_event text NOT NULL,
    final_event   text NOT NULL,
    created_at    timestamptz NOT NULL
);
CREATE UNIQUE INDEX sequences_dataset_events_key ON sequences (dataset_id, initial_event, final_event);
CREATE INDEX sequences_account_idx ON sequences (account_id, id);

-- The count reads a dataset's final events of a week in event_time order,
-- with their lead and id (whether Meta got the event), from the index
-- alone; each lead's earlier initial event is then found by
-- events_lead_idx, which now includes event_name so that it needs no row
-- either (same key: its other readers are served as before). Plain CREATE
-- INDEX: each reads every event once while new events wait
-- (docs/operations.md, "Migrations").
CREATE INDEX events_name_time_idx ON events (dataset_id, event_name, event_time) INCLUDE (lead_id, id);
CREATE INDEX events_lead_name_idx ON events (lead_id, dataset_id, event_time, id) INCLUDE (event_name);
DROP INDEX events_lead_idx;
ALTER INDEX events_lead_name_idx RENAME TO events_lead_idx;
