-- Three functions a batch of stage changes runs keep their plans where
-- the session keeps plans (store.keptPlansSQL), instead of planning on
-- every call, which cost a batch more than running them:
--   * lock_fresh_leads looks each lead up by its id alone, in the order of
--     the ids given (sorted: the leads are locked in one order), and
--     checks its account and updated_at outside the lookup (OFFSET 0
--     keeps them out of it): on a table analyzed while empty, a join of
--     the ids with the account's leads was priced the same as a read of
--     every lead of the account.
--   * first_reach and junk_signals are PL/pgSQL: a SQL function whose
--     statement has a FROM is planned again by every statement that calls
--     it; PL/pgSQL keeps the plan.
-- They answer the same.
CREATE OR REPLACE FUNCTION lock_fresh_leads(p_account bigint, p_ids bigint[], p_updated timestamptz[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    fresh integer;
BEGIN
    SELECT count(*) INTO fresh
    FROM unnest(p_ids, p_updated) AS x(id, updated_at)
    CROSS JOIN LATERAL (SELECT l.account_id, l.updated_at FROM leads l WHERE l.id = x.id OFFSET 0 FOR UPDATE) l
    WHERE l.account_id = p_account AND l.updated_at = x.updated_at;
    IF fresh <> cardinality(p_ids) THEN
        RAISE EXCEPTION 'a lead changed meanwhile' USING ERRCODE = 'LS409';
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION first_reach(sc stage_changes) RETURNS boolean LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN NOT EXISTS (SELECT 1 FROM stage_changes p WHERE p.lead_id = sc.lead_id AND p.stage = sc.stage
                       AND (p.occurred_at, p.id) < (sc.occurred_at, sc.id));
END $$;

CREATE OR REPLACE FUNCTION junk_signals(reasons text) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    RETURN (SELECT COALESCE(string_agg(r.value ->> 'signal', ',' ORDER BY r.ord), '')
            FROM jsonb_array_elements(CASE WHEN left(ltrim(reasons), 1) = '[' THEN reasons::jsonb ELSE '[]' END)
                 WITH ORDINALITY AS r(value, ord));
END $$;
