-- A new tracking is checked against the chain at once (docs/architecture.md, "The chain engine in detail"): a
-- payment mined before the tracking was stored is found only so. That check was owed in memory by the node that
-- stored the tracking, and lost when that node stopped first (a deploy, a crash, an RPC outage it was waiting
-- out), or, for a trace, when that node does not follow the chain (only the follower knows the blocks it passed).
-- It is now a row, stored with the tracking by the same statement (and when a trace is given its transaction);
-- the check deletes it once done, and the chain's follower runs the rows no one runs. `from_block`: where a
-- trace's search of the blocks passed before it was stored starts; a search that reads only part of its blocks
-- in one turn moves it on.
-- `trace`: a trace's check (no nonce, no transaction), which only the follower can run, so it takes it at once;
-- the others' it takes once old (their node checks them meanwhile). Each kind is read oldest first from its own
-- index: a burst of young checks of the other kind is never scanned.
CREATE TABLE owed_checks (
  tracking_id text PRIMARY KEY REFERENCES trackings (id) ON DELETE CASCADE,
  blockchain text NOT NULL,
  from_block numeric NOT NULL,
  trace boolean NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX owed_checks_chain ON owed_checks (blockchain, created_at);
CREATE INDEX owed_checks_traces ON owed_checks (blockchain, created_at) WHERE trace;

-- Once per statement, from its new rows: a create writes its trackings in batches, and a function called per
-- row costs each row a statement of its own (bench:bulk, 100,000 creates: 2,557/s per row against 3,114/s
-- without the table).
CREATE FUNCTION paywatch_owe_checks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO owed_checks (tracking_id, blockchain, from_block, trace)
  SELECT id, blockchain, after_block + 1, nonce IS NULL AND transaction IS NULL FROM stored WHERE status = 'pending';
  RETURN NULL;
END
$$;
CREATE TRIGGER trackings_owe_checks AFTER INSERT ON trackings REFERENCING NEW TABLE AS stored
  FOR EACH STATEMENT EXECUTE FUNCTION paywatch_owe_checks();

-- A trace given its transaction by a repeated create is checked by that transaction (rare: one row at a time).
-- Its search may still be owed or running: the row then stays for the check by the transaction (a search
-- settles only a trace's row).
CREATE FUNCTION paywatch_owe_attached_check() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO owed_checks (tracking_id, blockchain, from_block, trace) VALUES (NEW.id, NEW.blockchain, NEW.after_block + 1, false)
  ON CONFLICT (tracking_id) DO UPDATE SET trace = false;
  RETURN NULL;
END
$$;
CREATE TRIGGER trackings_owe_attached_check AFTER UPDATE OF transaction ON trackings FOR EACH ROW
  WHEN (NEW.status = 'pending' AND NEW.nonceless AND OLD.transaction IS NULL AND NEW.transaction IS NOT NULL)
  EXECUTE FUNCTION paywatch_owe_attached_check();
