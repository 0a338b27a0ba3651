-- A claimed delivery's lease end is now also its `next_attempt_at` (see store/deliveries.ts), and a
-- worker renews leases by delivery id: the index on `claimed_by` from 0003 serves no query any more
-- and only costs every claim a write.
DROP INDEX IF EXISTS deliveries_claimed;
