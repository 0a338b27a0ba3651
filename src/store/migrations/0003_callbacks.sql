-- Callback delivery: leases held by workers, the state of the last attempt, and the attempt log.

-- The claim of the worker holding the lease (locked_until): a worker only finishes a delivery it still
-- holds, so a worker that was presumed dead cannot overwrite the outcome of the one that took over.
ALTER TABLE deliveries ADD COLUMN claimed_by text;
ALTER TABLE deliveries ADD COLUMN last_attempt_at timestamptz;
ALTER TABLE deliveries ADD COLUMN last_status_code integer;
ALTER TABLE deliveries ADD COLUMN last_error text;
-- When the delivery left `due` (delivered, accepted or dead).
ALTER TABLE deliveries ADD COLUMN finished_at timestamptz;

-- Every attempt, as the operator sees it in GET /v2/payments/{secret_id}/deliveries.
CREATE TABLE delivery_attempts (
  id                text PRIMARY KEY,
  delivery_id       text NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
  -- 1 for the first attempt of the delivery; a worker that lost its lease may record the same number twice
  attempt           integer NOT NULL,
  started_at        timestamptz NOT NULL,
  duration_ms       integer NOT NULL,
  outcome           text NOT NULL CHECK (outcome IN ('delivered', 'accepted', 'failed', 'refused')),
  status_code       integer,
  error             text,
  -- the first bytes of the answer, for operators
  response_excerpt  text,
  worker            text NOT NULL
);
CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, started_at);

-- A worker renews the leases of the deliveries it holds.
CREATE INDEX deliveries_claimed ON deliveries (claimed_by) WHERE claimed_by IS NOT NULL;
