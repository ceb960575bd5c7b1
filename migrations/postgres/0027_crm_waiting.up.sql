-- Every page of an account asks whether its CRM deliveries are stuck
-- (waiting for a stage mapping, or for a CRM whose API keeps failing):
-- an index range over the account's waiting deliveries, never a scan of
-- the inbox.
CREATE INDEX crm_deliveries_waiting_idx ON crm_deliveries (account_id, waiting_for, connection_id) WHERE status = 'waiting';
