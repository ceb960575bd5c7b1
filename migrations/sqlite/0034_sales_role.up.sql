-- The sales role (docs/operations.md, "Roles"): between editor and
-- viewer, it marks stages on the lead page. Viewers marked stages until
-- now, so today's viewers become sales; a viewer from now on changes
-- nothing. SQLite cannot change a CHECK: the small table is copied.
CREATE TABLE memberships_new (
    account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    user_id    integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       text NOT NULL CHECK (role IN ('owner', 'editor', 'sales', 'viewer')),
    created_at datetime NOT NULL,
    PRIMARY KEY (account_id, user_id)
);
INSERT INTO memberships_new (account_id, user_id, role, created_at)
    SELECT account_id, user_id, CASE role WHEN 'viewer' THEN 'sales' ELSE role END, created_at
    FROM memberships;
DROP TABLE memberships;
ALTER TABLE memberships_new RENAME TO memberships;
CREATE INDEX memberships_user_idx ON memberships (user_id);
