-- Dashboard sessions bound to the admin token they were opened with (docs/operations.md, "Dashboard"):
-- after PAYWATCH_ADMIN_TOKEN is rotated, a cookie from before signs nobody in.

-- HMAC-SHA256 of the admin token, keyed with the session's cookie value: the row proves which token opened
-- the session without letting a reader of the table test guesses of the token (the key is only in the
-- browser's cookie; the table holds its SHA-256).
ALTER TABLE dashboard_sessions ADD COLUMN token_binding bytea;
-- Sessions from before the binding existed are bound to no token: their browsers sign in again.
DELETE FROM dashboard_sessions;
ALTER TABLE dashboard_sessions ALTER COLUMN token_binding SET NOT NULL;
