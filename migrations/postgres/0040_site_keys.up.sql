-- Site keys (DESIGN.md, "Browser capture"): public keys (pk_...) that a
-- website's snippet carries in its page, so the key itself is no secret and
-- is stored as it is (the install page shows it); what guards it is its
-- allowed origins, exact scheme and host, each with when a page of it last
-- posted. A site key reaches only /api/v1/collect.
CREATE TABLE site_keys (
    id         bigserial PRIMARY KEY,
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name       text NOT NULL,
    key        text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);
CREATE INDEX site_keys_account ON site_keys (account_id, created_at);

CREATE TABLE site_key_origins (
    site_key_id  bigint NOT NULL REFERENCES site_keys (id) ON DELETE CASCADE,
    origin       text NOT NULL,
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz,
    PRIMARY KEY (site_key_id, origin)
);
