-- A nonce-less trace (no nonce, no transaction) may have been paid in blocks the chain's follower passed
-- before the trace was stored: those blocks are searched for it once (docs/architecture.md, "Matching by
-- receiver"). That search was owed in memory by the node that stored the trace, so it was lost when that node
-- did not follow the chain (another node of the cluster does) or stopped before the search ran. It is now a
-- row, stored with the trace in the same statement, and the chain's follower takes the rows no one runs; a
-- search that reads only part of its blocks in one turn moves `from_block` on.
CREATE TABLE trace_searches (
  tracking_id text PRIMARY KEY REFERENCES trackings (id) ON DELETE CASCADE,
  blockchain text NOT NULL,
  from_block numeric NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX trace_searches_chain ON trace_searches (blockchain, created_at);

CREATE FUNCTION paywatch_owe_trace_search() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO trace_searches (tracking_id, blockchain, from_block) VALUES (NEW.id, NEW.blockchain, NEW.after_block + 1);
  RETURN NULL;
END
$$;
CREATE TRIGGER trackings_owe_trace_search AFTER INSERT ON trackings FOR EACH ROW
  WHEN (NEW.nonceless AND NEW.transaction IS NULL AND NEW.status = 'pending')
  EXECUTE FUNCTION paywatch_owe_trace_search();
