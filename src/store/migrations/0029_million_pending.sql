-- A million pending trackings on one node (docs/operations.md, "A million pending trackings"): every
-- query that walks pending or completed trackings is index-backed and bounded, and the counts the
-- dashboard and the metrics show come from the planner's statistics once they would need a scan.

-- The pending trackings oldest first (the sweeper's time-outs) and newest first (the dashboard's list
-- filtered by status): created_at alone left the list's tie-break on id to a sort.
DROP INDEX IF EXISTS trackings_pending_created;
CREATE INDEX trackings_pending_created_id ON trackings (created_at, id) WHERE status = 'pending';

-- The dashboard's list of succeeded or failed payments, newest first. Partial: a create writes nothing
-- to it, and the update that completes a tracking rewrites its index entries anyway (status is in the
-- predicates of the partial indexes above, so that update is never HOT).
CREATE INDEX trackings_completed_created ON trackings (status, created_at DESC, id DESC) WHERE status <> 'pending';

-- Pending trackings whose deadline passed (trackings created with a `deadline`, migration 0026): a
-- time-out by deadline walks only those whose deadline is below the block's timestamp.
CREATE INDEX trackings_pending_deadline ON trackings (blockchain, deadline) WHERE status = 'pending' AND deadline IS NOT NULL;

-- Pending trackings per chain, estimated by the planner (src/store/pending-counts.ts): without these
-- statistics it multiplies the two columns' frequencies as if they were independent.
CREATE STATISTICS IF NOT EXISTS trackings_chain_status (mcv) ON blockchain, status FROM trackings;

-- Autovacuum's defaults wait for 20% of a table to change (200,000 rows at a million): the statistics
-- above, and the visibility map that lets index-only scans skip the table, would lag by hours. Every
-- completion leaves a dead row version behind; vacuuming after 2% keeps the table and its indexes
-- from bloating between runs.
ALTER TABLE trackings SET (
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_insert_scale_factor = 0.02,
  autovacuum_analyze_scale_factor = 0.01
);
ALTER TABLE deliveries SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.01);
