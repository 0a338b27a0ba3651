-- Callbacks as a webhook platform (docs/api.md §8): Standard Webhooks secrets, endpoint health, paused
-- deliveries, reversal events.

-- The HMAC secret of an integration (owner 'integration:<id>') or an account's default secret for
-- trackings without an integration (owner 'account:<id>'). Sealed under PAYWATCH_SECRETS_KEY like the
-- private keys. After a rotation the previous secret still signs until `previous_until`.
CREATE TABLE webhook_secrets (
  owner            text PRIMARY KEY,
  account_id       text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  secret           text NOT NULL,
  previous_secret  text,
  previous_until   timestamptz,
  created_at       timestamptz NOT NULL
);

-- Opt-in to payment.reverted / payment.reconfirmed callbacks.
ALTER TABLE integrations ADD COLUMN reversal_events boolean NOT NULL DEFAULT false;

-- An endpoint is (account, scheme://host[:port] of the callback URL). A row appears with its first attempt.
CREATE TABLE webhook_endpoints (
  account_id       text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  url              text NOT NULL,
  state            text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'disabled')),
  disabled_reason  text,
  disabled_at      timestamptz,
  -- the first failure since the last success (null while it succeeds)
  failing_since    timestamptz,
  last_success_at  timestamptz,
  updated_at       timestamptz NOT NULL,
  PRIMARY KEY (account_id, url)
);
CREATE INDEX webhook_endpoints_disabled ON webhook_endpoints (account_id) WHERE state = 'disabled';

-- A due delivery of a disabled endpoint waits (not claimed, no retry spent) until the endpoint is enabled.
ALTER TABLE deliveries ADD COLUMN paused_at timestamptz;
-- What the delivery sends: null is the payment callback (docs/api.md §4); else the event's name
-- ('payment.reverted', 'payment.reconfirmed'). An event without the integration's opt-in is recorded in
-- state 'skipped' and never sent.
ALTER TABLE deliveries ADD COLUMN event text;
ALTER TABLE deliveries DROP CONSTRAINT deliveries_state_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_state_check CHECK (state IN ('due', 'delivered', 'accepted', 'dead', 'skipped'));
CREATE INDEX deliveries_paused ON deliveries (tracking_id) WHERE paused_at IS NOT NULL;

-- A watched success whose transaction left the chain: watched on for the transaction to be mined again.
ALTER TABLE success_watches ADD COLUMN reverted_at timestamptz;

-- When the paying transaction left the canonical chain after success; null again once reconfirmed.
-- `reverted_ever`: the record shows `reverted_at` only for trackings that were ever reverted.
ALTER TABLE trackings ADD COLUMN reverted_at timestamptz;
ALTER TABLE trackings ADD COLUMN reverted_ever boolean NOT NULL DEFAULT false;

-- The endpoint url of a callback URL, as JavaScript's URL.origin writes it for http(s) URLs: scheme and
-- host in lower case, without user info and without the scheme's default port.
CREATE FUNCTION paywatch_origin(u text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT lower(m[1]) || '://' || lower(m[2]) ||
    CASE WHEN m[3] IS NULL OR m[3] = '' OR (lower(m[1]) = 'http' AND m[3]::integer = 80)
      OR (lower(m[1]) = 'https' AND m[3]::integer = 443) THEN '' ELSE ':' || m[3]::integer::text END
  FROM (SELECT regexp_match(u, '^([A-Za-z][A-Za-z0-9+.-]*)://(?:[^@/?#]*@)?(\[[^]]*\]|[^/?#:]+)(?::([0-9]*))?') AS m) AS parts
$$;
-- An account's endpoints by url (is this url one of the account's endpoints? its deliveries?).
CREATE INDEX trackings_account_endpoint ON trackings (account_id, paywatch_origin(callback)) WHERE callback IS NOT NULL;
