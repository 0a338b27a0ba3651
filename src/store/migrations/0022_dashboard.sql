-- Operator dashboard (docs/operations.md, "Dashboard"): its sign-in sessions, and the indexes its
-- pages query by.

-- One row per signed-in browser: the cookie holds a random id, the table only its SHA-256, so a read
-- of the table signs nobody in. Shared by every node; sign-out deletes the row.
CREATE TABLE dashboard_sessions (
  id_hash     bytea PRIMARY KEY,
  -- the CSRF token of the session's forms (random, compared on every POST)
  csrf_token  text NOT NULL,
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL
);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);

-- The payment list, newest first, with keyset paging; per account too.
CREATE INDEX trackings_created ON trackings (created_at DESC, id DESC);
CREATE INDEX trackings_account_created ON trackings (account_id, created_at DESC, id DESC);
-- Search by secret_id (across accounts), sender and transaction.
CREATE INDEX trackings_secret ON trackings (secret_id);
CREATE INDEX trackings_sender ON trackings (sender, created_at DESC);
CREATE INDEX trackings_transaction ON trackings (transaction) WHERE transaction IS NOT NULL;
-- Charts: successes per minute, callback attempt durations over time.
CREATE INDEX trackings_confirmed ON trackings (confirmed_at) WHERE confirmed_at IS NOT NULL;
CREATE INDEX delivery_attempts_started ON delivery_attempts (started_at);
