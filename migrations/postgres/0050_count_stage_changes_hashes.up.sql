-- count_stage_changes joins its two arrays, the leads and their stage
-- changes. Its plan is made where the session keeps plans (keptPlansSQL),
-- which allows no hash join: a nested loop over the two arrays costs an
-- upload's chunk of a thousand changes a million comparisons. The
-- function allows hash joins for itself: it reads only its arrays, never
-- a table.
ALTER FUNCTION count_stage_changes(leads[], stage_changes[], integer)
    SET enable_hashjoin = on SET enable_mergejoin = on SET enable_material = on;
