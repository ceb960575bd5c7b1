-- Settings of the whole instance that an administrator changes on the
-- server settings page (/admin/settings): one row, id 1, made when first
-- saved. public_url is the address CRMs reach leadsignal at, which hook
-- URLs are made with and HubSpot's signatures are checked against ('' when
-- unset); LEADSIGNAL_PUBLIC_URL, when set, wins over it.
CREATE TABLE instance_settings (
    id         integer PRIMARY KEY CHECK (id = 1),
    public_url text NOT NULL DEFAULT '',
    updated_at timestamptz NOT NULL,
    -- Who saved them last; NULL once that user is removed.
    updated_by bigint REFERENCES users (id) ON DELETE SET NULL
);
