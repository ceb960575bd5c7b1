-- Sessions live here, not in the cookie: the cookie carries only a signed
-- random id, so a logout, a password change or a removal ends a session on
-- every replica at once. The id itself is never stored, only its SHA-256,
-- so a copy of this table opens no session.
CREATE TABLE sessions (
    id_hash      text PRIMARY KEY,
    -- NULL while nobody has logged in on the session (the login form's
    -- CSRF token lives in such a session).
    user_id      bigint REFERENCES users (id) ON DELETE CASCADE,
    data         bytea NOT NULL,
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL
);
CREATE INDEX sessions_user_idx ON sessions (user_id) WHERE user_id IS NOT NULL;
CREATE INDEX sessions_last_seen_idx ON sessions (last_seen_at);
