-- When a delivery's next attempt fell due. A claim moves `next_attempt_at` to the lease end (0006), so
-- `next_attempt_at` cannot say how long a claimed delivery, or one postponed behind its host's share,
-- has been waiting for its attempt: the oldest-due-age metric read 0 while a slow host's backlog waited.
-- Claims, lease renewals and postponements leave `due_at` alone. Nullable, without a default, so adding it
-- does not rewrite the table; rows written before it fall back to `next_attempt_at`.
ALTER TABLE deliveries ADD COLUMN due_at timestamptz;
