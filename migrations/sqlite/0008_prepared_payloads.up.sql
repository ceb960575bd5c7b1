-- An event's payload is built when the event is queued and kept in
-- events.payload with the stamp of what it was built from (capi.Stamp: the
-- build code and the account's and dataset's settings). The dispatcher sends
-- a payload whose stamp is the dataset's current one as it is, and builds
-- the others again from their lead. 0 is "no prepared payload": events
-- queued before this migration are built at send time, as before.
ALTER TABLE events ADD COLUMN payload_stamp bigint NOT NULL DEFAULT 0;
