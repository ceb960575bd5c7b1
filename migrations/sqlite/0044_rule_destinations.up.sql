-- One rule, several destinations (see the Postgres migration;
-- docs/destinations.md): also_dataset_ids is a JSON array of the rule's
-- destinations after dataset_id.
ALTER TABLE send_rules ADD COLUMN also_dataset_ids text NOT NULL DEFAULT '[]';
