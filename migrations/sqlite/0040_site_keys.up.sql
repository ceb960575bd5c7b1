-- Site keys and their allowed origins (see the Postgres migration).
CREATE TABLE site_keys (
    id         integer PRIMARY KEY AUTOINCREMENT,
    account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name       text NOT NULL,
    key        text NOT NULL UNIQUE,
    created_at datetime NOT NULL,
    revoked_at datetime
);
CREATE INDEX site_keys_account ON site_keys (account_id, created_at);

CREATE TABLE site_key_origins (
    site_key_id  integer NOT NULL REFERENCES site_keys (id) ON DELETE CASCADE,
    origin       text NOT NULL,
    created_at   datetime NOT NULL,
    last_seen_at datetime,
    PRIMARY KEY (site_key_id, origin)
);
