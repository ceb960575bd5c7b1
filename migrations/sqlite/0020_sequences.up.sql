-- Sequences (issue 20): per dataset, an initial and a
-- final event. A lead's sequence is complete when its final event is later
-- than its initial one; the Stages page counts complete sequences per week
-- against Meta's learning threshold (store.SequenceWeeks).
CREATE TABLE sequences (
    id            integer PRIMARY KEY AUTOINCREMENT,
    account_id    integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    dataset_id    integer NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    initial_event text NOT NULL,
    final_event   text NOT NULL,
    created_at    datetime NOT NULL
);
CREATE UNIQUE INDEX sequences_dataset_events_key ON sequences (dataset_id, initial_event, final_event);
CREATE INDEX sequences_account_idx ON sequences (account_id, id);

-- The count reads a dataset's final events of a week in event_time order,
-- with their lead (and rowid, the event's id), from the index alone; each
-- lead's earlier initial event is then found by events_lead_idx.
CREATE INDEX events_name_time_idx ON events (dataset_id, event_name, event_time, lead_id);
