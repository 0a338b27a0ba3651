-- `due_at`: when a delivery's next attempt fell due. A claim moves `next_attempt_at` to the lease end
-- (0006), so `next_attempt_at` cannot say how long a claimed delivery, or one postponed behind its host's
-- share, has been waiting for its attempt: the oldest-due-age metric read 0 while a slow host's backlog
-- waited. Claims, lease renewals and postponements leave `due_at` alone.
-- `claimed_at`: when the worker holding a delivery claimed it. A worker that dies mid-attempt records
-- nothing; the next claim logs that cut-off attempt as starting then.
-- Both nullable, without a default, so adding them does not rewrite the table; rows written before fall
-- back to `next_attempt_at` and the time of the next claim.
ALTER TABLE deliveries ADD COLUMN due_at timestamptz;
ALTER TABLE deliveries ADD COLUMN claimed_at timestamptz;
