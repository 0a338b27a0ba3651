-- A successful tracking whose inclusion block is not final yet. Success is final, but the chain
-- can still drop the block that paid: the follower checks these blocks on each new block and on
-- each reorg, and deletes the row once the block is finalized (so the table stays as small as the
-- chain's finality window) or when the block left the canonical chain (announced once).
CREATE TABLE success_watches (
  tracking_id   text PRIMARY KEY REFERENCES trackings(id) ON DELETE CASCADE,
  chain         text NOT NULL,
  block_number  bigint NOT NULL,
  block_hash    text NOT NULL,
  transaction   text NOT NULL,
  created_at    timestamptz NOT NULL
);
CREATE INDEX success_watches_chain_block ON success_watches (chain, block_number);
