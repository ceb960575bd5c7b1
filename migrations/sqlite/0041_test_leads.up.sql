-- Test leads (see the Postgres migration). SQLite's event_state is
-- models.Event.State, registered by the store.
ALTER TABLE leads ADD COLUMN test boolean NOT NULL DEFAULT false;
