-- Sessions live here, not in the cookie: the cookie carries only a signed
-- random id (see the Postgres migration).
CREATE TABLE sessions (
    id_hash      text PRIMARY KEY,
    user_id      integer REFERENCES users (id) ON DELETE CASCADE,
    data         blob NOT NULL,
    created_at   datetime NOT NULL,
    last_seen_at datetime NOT NULL
);
CREATE INDEX sessions_user_idx ON sessions (user_id) WHERE user_id IS NOT NULL;
CREATE INDEX sessions_last_seen_idx ON sessions (last_seen_at);
