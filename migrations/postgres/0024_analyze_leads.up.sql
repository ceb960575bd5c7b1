-- Leads analyzed before 0023 are analyzed again, with its finer sample of
-- the search text, rather than at autovacuum's next analyze, which a big
-- account reaches only once a tenth of its leads changed. A step of its
-- own: an ANALYZE in 0023's transaction still read the index's old
-- statistics target. Leads never analyzed (reltuples -1: a new
-- installation) are left to store.AnalyzeNew, which analyzes them once
-- they hold rows.
DO $$
BEGIN
    IF (SELECT reltuples FROM pg_class WHERE oid = 'leads'::regclass) > 0 THEN
        ANALYZE leads;
    END IF;
END
$$;
