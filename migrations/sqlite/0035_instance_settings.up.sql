-- Settings of the whole instance (see the Postgres migration).
CREATE TABLE instance_settings (
    id         integer PRIMARY KEY CHECK (id = 1),
    public_url text NOT NULL DEFAULT '',
    updated_at datetime NOT NULL,
    updated_by integer REFERENCES users (id) ON DELETE SET NULL
);
