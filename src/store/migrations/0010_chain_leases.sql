-- Leadership of a chain among the nodes sharing the database: a lease the following node renews.
-- `token` grows by one on every acquisition: each write of the follower checks, in its own transaction,
-- that the row still carries its token and has not expired, so a node that froze (stopped process, lost
-- network) and woke after another took over writes nothing more for the chain.
-- `expires_at` is set from the database's clock, so the nodes' clocks do not matter.
-- `holder_pid`: the PostgreSQL backend of the holder's lease connection; when it is gone (the process was
-- killed and its sockets closed), the lease is taken over at once instead of at its expiry.
CREATE TABLE chain_leases (
  chain text PRIMARY KEY,
  holder text NOT NULL,
  holder_pid integer,
  token bigint NOT NULL,
  acquired_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
