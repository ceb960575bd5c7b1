-- Postgres's step 29 adds lock_fresh_leads, the check that a batch of stage
-- changes' leads are as they were read. SQLite has one writer: the store
-- checks them inside the write's transaction (store.ChangeLeads).
SELECT 1;
