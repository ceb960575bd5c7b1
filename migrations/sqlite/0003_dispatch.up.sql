-- Meta datasets, the outbox of events and the log of requests sent.
CREATE TABLE datasets (
    id               integer PRIMARY KEY AUTOINCREMENT,
    account_id       integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name             text NOT NULL,
    pixel_id         text NOT NULL,
    token_sealed     text NOT NULL DEFAULT '',
    token_last4      text NOT NULL DEFAULT '',
    token_env        text NOT NULL DEFAULT '',
    app_secret_sealed text NOT NULL DEFAULT '',
    app_secret_env   text NOT NULL DEFAULT '',
    test_event_code  text NOT NULL DEFAULT '',
    api_version      text NOT NULL DEFAULT '',
    mode             text NOT NULL DEFAULT 'dry_run' CHECK (mode IN ('live', 'test', 'dry_run')),
    ldu              text NOT NULL DEFAULT 'off' CHECK (ldu IN ('off', 'california', 'always')),
    paused_at        datetime,
    paused_reason    text NOT NULL DEFAULT '',
    throttled_until  datetime,
    created_at       datetime NOT NULL,
    updated_at       datetime NOT NULL
);
CREATE UNIQUE INDEX datasets_account_name_key ON datasets (account_id, lower(name));

CREATE TABLE events (
    id              integer PRIMARY KEY AUTOINCREMENT,
    account_id      integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    dataset_id      integer NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    lead_id         integer NOT NULL REFERENCES leads (id) ON DELETE CASCADE,
    origin          text NOT NULL,
    origin_id       integer,
    event_name      text NOT NULL,
    event_id        text NOT NULL,
    event_time      datetime NOT NULL,
    value           real,
    currency        text NOT NULL DEFAULT '',
    status          text NOT NULL CHECK (status IN ('queued', 'sending', 'sent', 'failed', 'expired', 'dry_run')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at datetime NOT NULL,
    lease_until     datetime,
    last_error      text NOT NULL DEFAULT '',
    fbtrace_id      text NOT NULL DEFAULT '',
    request_id      integer,
    payload         text NOT NULL DEFAULT '',
    sent_at         datetime,
    created_at      datetime NOT NULL,
    updated_at      datetime NOT NULL,
    UNIQUE (dataset_id, event_id)
);
-- The dispatcher's claim: pending events of a dataset in event_time order,
-- read in index order and stopped at the batch size (most are due).
CREATE INDEX events_due_idx ON events (dataset_id, event_time, id) WHERE status IN ('queued', 'sending');
CREATE INDEX events_lead_idx ON events (lead_id, dataset_id, event_time, id);
CREATE INDEX events_account_idx ON events (account_id, created_at DESC, id DESC);
CREATE INDEX events_account_status_idx ON events (account_id, status);

CREATE TABLE send_requests (
    id              integer PRIMARY KEY AUTOINCREMENT,
    account_id      integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    dataset_id      integer NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    kind            text NOT NULL DEFAULT 'batch',
    started_at      datetime NOT NULL,
    duration_ms     integer NOT NULL DEFAULT 0,
    events_count    integer NOT NULL DEFAULT 0,
    http_status     integer NOT NULL DEFAULT 0,
    events_received integer NOT NULL DEFAULT 0,
    fbtrace_id      text NOT NULL DEFAULT '',
    error           text NOT NULL DEFAULT '',
    response        text NOT NULL DEFAULT ''
);
CREATE INDEX send_requests_dataset_idx ON send_requests (dataset_id, started_at DESC);
