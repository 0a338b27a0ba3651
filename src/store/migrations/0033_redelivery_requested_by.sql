-- Who asked for a redelivery ('api', 'dashboard', 'cli', 'recovery'), shown in the operator's timeline;
-- null for deliveries nobody asked for again, and for those written before this column existed.
ALTER TABLE deliveries ADD COLUMN requested_by text;
