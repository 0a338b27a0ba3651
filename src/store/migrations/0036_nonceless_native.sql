-- Whether a chain has pending nonce-less traces of its native currency (docs/architecture.md, "Matching by
-- receiver"): only such a payment can be made by a transaction that emitted no log, whose receipt the block's
-- logs do not tell. A block is then read with its receipts; with token traces alone its logs suffice. One
-- probe per block, which a filter over trackings_nonceless_receiver would turn into a scan of every token trace.
CREATE INDEX trackings_nonceless_native ON trackings (blockchain)
  WHERE status = 'pending' AND nonceless AND transaction IS NULL AND lower(token) = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
