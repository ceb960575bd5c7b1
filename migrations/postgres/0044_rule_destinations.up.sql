-- One rule, several destinations (docs/destinations.md): a send rule or
-- stage mapping sends to dataset_id first and then to each destination of
-- also_dataset_ids, a JSON array of dataset ids of the same account, in
-- order. The store checks them when a rule is saved; destinations are
-- never deleted.
ALTER TABLE send_rules ADD COLUMN also_dataset_ids text NOT NULL DEFAULT '[]';
