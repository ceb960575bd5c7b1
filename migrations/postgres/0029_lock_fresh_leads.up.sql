-- A batch of stage changes (store.ChangeLeads) is decided from its leads
-- as read, outside any transaction, and written in one pipeline. Its first
-- statement locks the leads and aborts the whole write when one changed
-- since it was read: lock_fresh_leads raises SQLSTATE LS409, which the
-- store answers as ErrStale, and the batch is decided again.
CREATE FUNCTION lock_fresh_leads(p_account bigint, p_ids bigint[], p_updated timestamptz[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    fresh integer;
BEGIN
    SELECT count(*) INTO fresh FROM (
        SELECT l.id FROM leads l
        JOIN unnest(p_ids, p_updated) AS x(id, updated_at) ON l.id = x.id
        WHERE l.account_id = p_account AND l.updated_at = x.updated_at
        ORDER BY l.id
        FOR UPDATE OF l
    ) AS locked;
    IF fresh <> cardinality(p_ids) THEN
        RAISE EXCEPTION 'a lead changed meanwhile' USING ERRCODE = 'LS409';
    END IF;
END
$$;
