-- Links are removed softly: trackings keep referring to them (trackings.link_id), a removed link takes
-- no new payments and its payments are no longer listed.
ALTER TABLE links ADD COLUMN removed_at timestamptz;
