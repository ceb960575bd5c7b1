-- A batch of stage changes reads its account's CRM stage labels
-- (store.ReadStages): crm_stages had no index by account, so every batch
-- read every account's CRM stages. In the order the read wants them.
CREATE INDEX crm_stages_account_idx ON crm_stages (account_id, connection_id, position, crm_stage_id);
