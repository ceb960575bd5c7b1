-- Users, accounts and who may see which account.
CREATE TABLE users (
    id              integer PRIMARY KEY AUTOINCREMENT,
    email           text NOT NULL,
    password_hash   text NOT NULL,
    is_admin        boolean NOT NULL DEFAULT false,
    last_account_id integer,
    created_at      datetime NOT NULL,
    updated_at      datetime NOT NULL
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE accounts (
    id              integer PRIMARY KEY AUTOINCREMENT,
    slug            text NOT NULL UNIQUE,
    name            text NOT NULL,
    timezone        text NOT NULL DEFAULT 'UTC',
    default_country text NOT NULL DEFAULT '',
    currency        text NOT NULL DEFAULT 'USD',
    crm_name        text NOT NULL DEFAULT '',
    created_at      datetime NOT NULL,
    updated_at      datetime NOT NULL
);

CREATE TABLE memberships (
    account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    user_id    integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       text NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    created_at datetime NOT NULL,
    PRIMARY KEY (account_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id);
