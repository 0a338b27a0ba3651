-- No planner statistics for the callback origin of trackings_account_endpoint. ANALYZE evaluates an index's
-- expression for every sampled row, and paywatch_origin() is a regular expression in PL/pgSQL: on the embedded
-- database, which the service analyzes itself every ten seconds while trackings change (on the main thread),
-- analyzing a thousand trackings took 22.6 ms with it and 7.7 ms without, a hundred thousand 84 ms and 42 ms.
-- The queries on it (an account's trackings for one endpoint) name the account and the origin, which only this
-- index covers: the default estimate for the origin keeps them on it.
ALTER INDEX trackings_account_endpoint ALTER COLUMN 2 SET STATISTICS 0;
