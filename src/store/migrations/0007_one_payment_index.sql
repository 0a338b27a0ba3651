-- trackings_payment (0004) indexes (blockchain, sender, nonce) for trackings in any state, so the
-- engine's lookup of pending trackings by sender and nonce is served by it as well (it finds the few
-- trackings of one payment and checks their status). The partial index of 0001 on the same columns
-- only cost every create, completion and timeout an index write.
DROP INDEX IF EXISTS trackings_pending_sender_nonce;
