-- One rule, several destinations (docs/destinations.md): a send rule or
-- stage mapping sends to dataset_id and to each destination of
-- also_dataset_ids, a JSON array of dataset ids of the same account, in
-- the order of their ids. The store checks them when a rule is saved;
-- destinations are never deleted. The CHECK keeps the array as the store
-- writes it ([3,7]): a row it could not read would stop its account's
-- captures.
ALTER TABLE send_rules ADD COLUMN also_dataset_ids text NOT NULL DEFAULT '[]'
    CHECK (also_dataset_ids ~ '^\[([0-9]+(,[0-9]+)*)?\]$');
