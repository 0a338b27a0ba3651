-- When the waiting user was released (the operator's timeline shows it); null until then, and for
-- trackings released before this column existed.
ALTER TABLE trackings ADD COLUMN released_at timestamptz;
