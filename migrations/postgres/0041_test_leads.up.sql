-- Test leads: the site snippet section's "Send a test lead" captures a lead
-- through the collect API's own path, marked test. A test lead is a lead
-- like any other (listed, counted, its rules decided), but none of its
-- events goes to Meta: each is not sent, with models.ReasonTestLead, which
-- event_state reads as not_sent like the other decisions'.
ALTER TABLE leads ADD COLUMN test boolean NOT NULL DEFAULT false;

CREATE OR REPLACE FUNCTION event_state(status text, last_error text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE
    WHEN status <> 'failed' THEN status
    WHEN last_error = 'not sent: a person marked the lead junk'
      OR substr(last_error, 1, 28) = 'not sent: no longer matches '
      OR last_error = 'the lead no longer exists'
      OR last_error = 'not sent: a test lead, which never goes to Meta' THEN 'not_sent'
    WHEN substr(last_error, 1, 10) = 'not sent: ' THEN 'held_back'
    ELSE 'failed' END
$$;
