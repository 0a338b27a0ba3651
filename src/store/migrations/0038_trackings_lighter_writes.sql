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
-- A node not upgraded yet (several nodes upgrade one after another) stores trackings without the column: the
-- trigger fills it for those rows. This version writes it, so the trigger's WHEN passes its rows by.
CREATE FUNCTION paywatch_fill_callback_origin() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.callback_origin := paywatch_origin(NEW.callback);
  RETURN NEW;
END
$$;
CREATE TRIGGER trackings_fill_callback_origin BEFORE INSERT ON trackings FOR EACH ROW
  WHEN (NEW.callback IS NOT NULL AND NEW.callback_origin IS NULL) EXECUTE FUNCTION paywatch_fill_callback_origin();

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

-- The replaced-transaction trigger (migration 0004) fired on every update that sets `transaction`, as a
-- verdict's does, and called its PL/pgSQL function for each row; it changes a row only when a hash it held
-- is replaced, so that is now its condition.
DROP TRIGGER trackings_keep_replaced_transaction ON trackings;
CREATE TRIGGER trackings_keep_replaced_transaction
  BEFORE UPDATE OF transaction ON trackings
  FOR EACH ROW WHEN (OLD.transaction IS NOT NULL AND NEW.transaction IS DISTINCT FROM OLD.transaction)
  EXECUTE FUNCTION trackings_keep_replaced_transaction();
