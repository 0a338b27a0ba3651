-- Chain engine: what each chain's follower has processed, and the trackings whose transaction is
-- mined but not yet confirmed (or finalized) enough.

-- The window of unfinalized blocks per chain, oldest = the last finalized block seen. The highest
-- number is the follower's progress: a restarted (or taking-over) node resumes right after it, and
-- resolves a reorg that happened while nobody followed against these hashes.
CREATE TABLE chain_blocks (
  chain        text NOT NULL,
  number       bigint NOT NULL,
  hash         text NOT NULL,
  parent_hash  text NOT NULL,
  -- block timestamp, seconds since the epoch (head age for readiness on every node)
  timestamp    bigint NOT NULL,
  PRIMARY KEY (chain, number)
);

-- A pending tracking whose transaction was found: the block it is in and the evidence the judge
-- needs, so that each new block re-judges it (confirmations, finality) without asking the RPC.
-- A reorg that drops the block deletes the row: the tracking is searched for again.
CREATE TABLE tracking_matches (
  tracking_id   text PRIMARY KEY REFERENCES trackings(id) ON DELETE CASCADE,
  chain         text NOT NULL,
  block_number  bigint NOT NULL,
  block_hash    text NOT NULL,
  transaction   text NOT NULL,
  -- {given, consumer}: the judge's MinedTransaction objects, bigints as decimal strings
  evidence      jsonb NOT NULL,
  created_at    timestamptz NOT NULL
);
CREATE INDEX tracking_matches_chain_block ON tracking_matches (chain, block_number);
