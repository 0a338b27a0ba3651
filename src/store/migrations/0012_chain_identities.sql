-- Which chain the stored progress belongs to: the chain id and the hash of an early block (the
-- genesis block), recorded the first time a chain is followed. A provider that answers another hash
-- for that block serves another chain under the same id (a restarted development node, a
-- misconfigured URL): it is refused, and the stored progress is never applied to its chain.
CREATE TABLE chain_identities (
  chain        text PRIMARY KEY,
  chain_id     bigint NOT NULL,
  block_number bigint NOT NULL,
  block_hash   text NOT NULL,
  recorded_at  timestamptz NOT NULL
);
