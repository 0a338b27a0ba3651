-- Payments identified without a nonce (docs/api.md, "Payments without a nonce"): the sender and the nonce
-- are unknown until the paying transaction is found, and a tracking may carry a deadline (Unix seconds).
-- The unique (account, blockchain, sender, nonce) still holds once both are known: NULLs never collide.
ALTER TABLE trackings ALTER COLUMN nonce DROP NOT NULL;
ALTER TABLE trackings ALTER COLUMN sender DROP NOT NULL;
ALTER TABLE trackings ADD COLUMN deadline numeric(20, 0);
-- The widget channel's second identifier: blockchain, sender, receiver and deadline (the one created first).
CREATE INDEX trackings_widget_deadline ON trackings (blockchain, receiver, deadline, created_at) WHERE deadline IS NOT NULL;
