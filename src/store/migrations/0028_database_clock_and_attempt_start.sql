-- Time-outs on one clock, the database's (docs/operations.md, "Clocks"): `registered_at` is when the
-- database stored the tracking (its own now(), whatever the clock of the node that created it), and
-- `matched_at` when a tracking's transaction was found, so the sweeper compares times of one clock
-- alone. Trackings pending before this migration keep their creation time. `now()` is stable: adding
-- the columns does not rewrite the tables.
ALTER TABLE trackings ADD COLUMN registered_at timestamptz NOT NULL DEFAULT now();
UPDATE trackings SET registered_at = created_at WHERE status = 'pending';
CREATE INDEX trackings_pending_registered ON trackings (registered_at) WHERE status = 'pending';
ALTER TABLE tracking_matches ADD COLUMN matched_at timestamptz NOT NULL DEFAULT now();
-- A callback attempt spends a retry only once it started: `sending_at` is written right before the
-- request goes out, and a delivery whose worker died holding it counts an interrupted attempt only when
-- it was set (claimed and never sent before a kill -9: nothing spent).
ALTER TABLE deliveries ADD COLUMN sending_at timestamptz;
