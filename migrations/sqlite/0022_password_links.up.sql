-- Set-password links (see the Postgres migration).
CREATE TABLE password_links (
    token_hash text PRIMARY KEY,
    user_id    integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    account_id integer REFERENCES accounts (id) ON DELETE SET NULL,
    created_at datetime NOT NULL,
    expires_at datetime NOT NULL
);
CREATE UNIQUE INDEX password_links_user_key ON password_links (user_id);
