-- A stage's aliases: the other labels CRMs and files use for it ("Closed
-- Won", "closedwon"), a JSON list of strings. A change under an alias
-- records the stage (internal/name.Stages); no two stages of an account
-- share a label, which the store checks when aliases are saved.
ALTER TABLE stages ADD COLUMN aliases text NOT NULL DEFAULT '[]';
