-- Payments without a nonce (docs/api.md, "Payments without a nonce"; docs/architecture.md, "Matching by
-- receiver"). `nonceless`: the tracking was created without a nonce. Its sender and nonce are filled in once
-- its transaction is known, so the flag is what keeps its identity (secret_id) and its matching by receiver.
ALTER TABLE trackings ADD COLUMN nonceless boolean NOT NULL DEFAULT false;
-- A block's touched receivers are looked up in one statement: the pending nonce-less traces by receiver.
CREATE INDEX trackings_nonceless_receiver ON trackings (blockchain, receiver, created_at)
  WHERE status = 'pending' AND nonceless AND transaction IS NULL;
-- The nonce-less trackings whose deadline a block has passed, found by one range probe per block.
CREATE INDEX trackings_nonceless_deadline ON trackings (blockchain, deadline)
  WHERE status = 'pending' AND nonceless AND deadline IS NOT NULL;
