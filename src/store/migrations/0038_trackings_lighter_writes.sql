-- Fewer and cheaper index entries for every new version of a trackings row: a create writes one into each
-- of the table's indexes, and so does the verdict that completes a tracking (its update is never HOT:
-- status is in the partial indexes' predicates).

-- The callback's origin is a column, written with the tracking (src/domain/endpoint-url.ts), no longer an
-- expression index over paywatch_origin(callback): that index called the PL/pgSQL function for every
-- new row version, and ANALYZE called it for every sampled row (hence 0037's statistics target 0, which
-- leaves with the index). Measured on 20,000 creates in batches of 500, embedded: 1.5 s -> 1.1 s.
ALTER TABLE trackings ADD COLUMN callback_origin text;
UPDATE trackings SET callback_origin = paywatch_origin(callback) WHERE callback IS NOT NULL;
DROP INDEX trackings_account_endpoint;
CREATE INDEX trackings_account_endpoint ON trackings (account_id, callback_origin) WHERE callback_origin IS NOT NULL;

-- Each unique constraint serves the lookups of the plain index beside it: the engine's by
-- (blockchain, sender, nonce) across accounts, the operator's search by secret_id across accounts. A
-- unique constraint is the same whatever its columns' order, so each leads with those columns and the
-- plain index goes: one index entry fewer each, per row version (20,000 creates: 1.1 s -> 0.94 s).
ALTER TABLE trackings
  DROP CONSTRAINT trackings_account_id_blockchain_sender_nonce_key,
  ADD CONSTRAINT trackings_identity_key UNIQUE (blockchain, sender, nonce, account_id),
  DROP CONSTRAINT trackings_account_id_secret_id_key,
  ADD CONSTRAINT trackings_secret_key UNIQUE (secret_id, account_id);
DROP INDEX trackings_payment;
DROP INDEX trackings_secret;
