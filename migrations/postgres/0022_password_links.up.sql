-- A set-password link lets a person who has no password yet (invited by an
-- owner, or created by an administrator) choose one and log in. Only the
-- SHA-256 of the link's token is stored, so a copy of this table sets no
-- password. A user has at most one link: a new one voids the old. A link is
-- deleted when it is used.
CREATE TABLE password_links (
    token_hash text PRIMARY KEY,
    user_id    bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- The account the person was invited to, where the link lands them;
    -- NULL for an administrator's link.
    account_id bigint REFERENCES accounts (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX password_links_user_key ON password_links (user_id);
