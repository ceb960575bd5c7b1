-- Ingest keys, leads with their match keys and junk verdict, stage changes.
ALTER TABLE accounts ADD COLUMN junk_settings text NOT NULL DEFAULT '{}';

CREATE TABLE ingest_keys (
    id           bigserial PRIMARY KEY,
    account_id   bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name         text NOT NULL,
    prefix       text NOT NULL,
    key_hash     text NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX ingest_keys_account_idx ON ingest_keys (account_id, created_at DESC);

CREATE TABLE leads (
    id                bigserial PRIMARY KEY,
    account_id        bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    external_id       text,
    source            text NOT NULL,
    partial           boolean NOT NULL DEFAULT false,
    email             text NOT NULL DEFAULT '',
    phone             text NOT NULL DEFAULT '',
    phone_e164        text NOT NULL DEFAULT '',
    first_name        text NOT NULL DEFAULT '',
    last_name         text NOT NULL DEFAULT '',
    city              text NOT NULL DEFAULT '',
    state             text NOT NULL DEFAULT '',
    zip               text NOT NULL DEFAULT '',
    country           text NOT NULL DEFAULT '',
    gender            text NOT NULL DEFAULT '',
    date_of_birth     text NOT NULL DEFAULT '',
    message           text NOT NULL DEFAULT '',
    fbclid            text NOT NULL DEFAULT '',
    fbc               text NOT NULL DEFAULT '',
    fbp               text NOT NULL DEFAULT '',
    client_ip_address text NOT NULL DEFAULT '',
    client_user_agent text NOT NULL DEFAULT '',
    event_source_url  text NOT NULL DEFAULT '',
    fill_seconds      double precision,
    honeypot          text NOT NULL DEFAULT '',
    meta_lead_id      text NOT NULL DEFAULT '',
    fields            text NOT NULL DEFAULT '{}',
    match_keys        text NOT NULL DEFAULT '{}',
    email_hash        text NOT NULL DEFAULT '',
    phone_hash        text NOT NULL DEFAULT '',
    junk              boolean NOT NULL DEFAULT false,
    junk_reasons      text NOT NULL DEFAULT '[]',
    junk_override     text NOT NULL DEFAULT '',
    stage             text NOT NULL DEFAULT '',
    created_at        timestamptz NOT NULL,
    received_at       timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL
);
-- One lead per external_id in an account: a resent form or a concurrent
-- double post finds the first.
CREATE UNIQUE INDEX leads_external_id_key ON leads (account_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX leads_account_created_idx ON leads (account_id, created_at DESC, id DESC);
-- Full indexes (not partial): prepared statements get generic plans that
-- could not prove a partial index's predicate.
CREATE INDEX leads_email_hash_idx ON leads (account_id, email_hash, created_at);
CREATE INDEX leads_phone_hash_idx ON leads (account_id, phone_hash, created_at);
CREATE INDEX leads_meta_lead_id_idx ON leads (account_id, meta_lead_id) WHERE meta_lead_id <> '';

CREATE TABLE stage_changes (
    id          bigserial PRIMARY KEY,
    account_id  bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    lead_id     bigint NOT NULL REFERENCES leads (id) ON DELETE CASCADE,
    stage       text NOT NULL,
    value       double precision,
    currency    text NOT NULL DEFAULT '',
    occurred_at timestamptz NOT NULL,
    change_id   text,
    user_id     bigint REFERENCES users (id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL
);
CREATE INDEX stage_changes_lead_idx ON stage_changes (lead_id, occurred_at, id);
CREATE UNIQUE INDEX stage_changes_change_id_key ON stage_changes (lead_id, change_id) WHERE change_id IS NOT NULL;
