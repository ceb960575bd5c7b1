-- The sales role (docs/operations.md, "Roles"): between editor and
-- viewer, it marks stages on the lead page. Viewers marked stages until
-- now, so today's viewers become sales; a viewer from now on changes
-- nothing.
ALTER TABLE memberships DROP CONSTRAINT memberships_role_check;
UPDATE memberships SET role = 'sales' WHERE role = 'viewer';
ALTER TABLE memberships ADD CONSTRAINT memberships_role_check
    CHECK (role IN ('owner', 'editor', 'sales', 'viewer'));
