-- One rule, several destinations (see the Postgres migration;
-- docs/destinations.md): also_dataset_ids is a JSON array of the rule's
-- destinations after dataset_id, digits and commas only, as the store
-- writes it.
ALTER TABLE send_rules ADD COLUMN also_dataset_ids text NOT NULL DEFAULT '[]'
    CHECK (json_valid(also_dataset_ids) AND json_type(also_dataset_ids) = 'array'
           AND also_dataset_ids NOT GLOB '*[^],0-9[]*');
