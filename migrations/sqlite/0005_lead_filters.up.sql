-- Indexes for the leads list's rarer filters: junk, partial leads and a
-- stage each read only their own leads, newest first, instead of every
-- lead of the account (a million, in a large one). Partial indexes: a
-- capture adds an entry only for a lead that is junk or partial. The
-- queries spell out each predicate (store.filterLeads), so plans made for
-- any parameters can use them.
CREATE INDEX leads_junk_idx ON leads (account_id, created_at DESC, id DESC) WHERE junk;
CREATE INDEX leads_partial_idx ON leads (account_id, created_at DESC, id DESC) WHERE partial;
CREATE INDEX leads_stage_idx ON leads (account_id, stage, created_at DESC, id DESC) WHERE stage <> '';
