-- Users, accounts and who may see which account.
CREATE TABLE users (
    id              bigserial PRIMARY KEY,
    email           text NOT NULL,
    password_hash   text NOT NULL,
    is_admin        boolean NOT NULL DEFAULT false,
    last_account_id bigint,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE accounts (
    id              bigserial PRIMARY KEY,
    slug            text NOT NULL UNIQUE,
    name            text NOT NULL,
    timezone        text NOT NULL DEFAULT 'UTC',
    default_country text NOT NULL DEFAULT '',
    currency        text NOT NULL DEFAULT 'USD',
    crm_name        text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);

CREATE TABLE memberships (
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    user_id    bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       text NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id);
