-- CRM connections (docs/crm.md): a CRM posts its deals' stage changes to
-- /hooks/<kind>/<token>. The token names the connection in the URL; the
-- CRM's own secret (HubSpot client secret, Pipedrive Basic Auth password,
-- generic signing or bearer secret) authenticates each delivery, and the
-- API token reads contacts and pipelines. Both are sealed (internal/seal),
-- or named by the environment variable the setup file read them from.
CREATE TABLE crm_connections (
    id                bigserial PRIMARY KEY,
    account_id        bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    kind              text NOT NULL CHECK (kind IN ('hubspot', 'pipedrive', 'generic')),
    name              text NOT NULL,
    token             text NOT NULL UNIQUE,
    secret_sealed     text NOT NULL DEFAULT '',
    secret_env        text NOT NULL DEFAULT '',
    api_token_sealed  text NOT NULL DEFAULT '',
    api_token_env     text NOT NULL DEFAULT '',
    lead_id_property  text NOT NULL DEFAULT '',
    -- The generic mapping: target -> dotted path, a JSON object.
    fields            text NOT NULL DEFAULT '{}',
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL
);
-- A connection is known by its kind and name (the setup file's key).
CREATE UNIQUE INDEX crm_connections_name_key ON crm_connections (account_id, kind, lower(name));

-- A connection's stage table: each CRM stage id, its label as the CRM's
-- pipelines API lists it, and the account's stage it means ('' while
-- unmapped). A stage seen in a delivery but never listed has no label.
CREATE TABLE crm_stages (
    connection_id bigint NOT NULL REFERENCES crm_connections (id) ON DELETE CASCADE,
    account_id    bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    crm_stage_id  text NOT NULL,
    label         text NOT NULL DEFAULT '',
    pipeline      text NOT NULL DEFAULT '',
    position      integer NOT NULL DEFAULT 0,
    stage         text NOT NULL DEFAULT '',
    seen_at       timestamptz,
    PRIMARY KEY (connection_id, crm_stage_id)
);

-- The inbox: each stage change a CRM delivered, stored as it came before
-- the CRM is answered, once per the CRM's idempotency key. The worker
-- (internal/crmsync) takes the waiting ones that are due, in order.
CREATE TABLE crm_deliveries (
    id              bigserial PRIMARY KEY,
    account_id      bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    connection_id   bigint NOT NULL REFERENCES crm_connections (id) ON DELETE CASCADE,
    key             text NOT NULL,
    body            text NOT NULL,
    received_at     timestamptz NOT NULL,
    object_id       text NOT NULL DEFAULT '',
    crm_stage_id    text NOT NULL DEFAULT '',
    occurred_at     timestamptz NOT NULL,
    status          text NOT NULL CHECK (status IN ('waiting', 'done', 'gave_up')),
    -- What a waiting delivery waits for ('' when not tried yet): 'lead',
    -- 'mapping' or 'crm'; reason says it in words.
    waiting_for     text NOT NULL DEFAULT '',
    reason          text NOT NULL DEFAULT '',
    attempts        integer NOT NULL DEFAULT 0,
    next_try_at     timestamptz NOT NULL,
    tried_at        timestamptz,
    lead_id         bigint REFERENCES leads (id) ON DELETE SET NULL,
    stage_change_id bigint REFERENCES stage_changes (id) ON DELETE SET NULL,
    stage           text NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX crm_deliveries_key ON crm_deliveries (connection_id, key);
CREATE INDEX crm_deliveries_due_idx ON crm_deliveries (next_try_at, id) WHERE status = 'waiting';
CREATE INDEX crm_deliveries_connection_idx ON crm_deliveries (connection_id, id DESC);
CREATE INDEX crm_deliveries_lead_idx ON crm_deliveries (lead_id) WHERE lead_id IS NOT NULL;
CREATE INDEX crm_deliveries_change_idx ON crm_deliveries (stage_change_id) WHERE stage_change_id IS NOT NULL;

-- Where a stage change came from ('' for a person or the stage API; a
-- CRM's name for a connection's), and the lead_event_source its events
-- send when the account names no CRM. Constant defaults: no rewrite.
ALTER TABLE stage_changes ADD COLUMN source text NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN lead_event_source text NOT NULL DEFAULT '';
