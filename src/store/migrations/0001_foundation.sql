-- Foundation schema: accounts and their credentials, payment trackings, and the tables the chain
-- engine, callback delivery, links, shops and apps build on.

CREATE TABLE accounts (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  -- SHA-256 of the key: keys are 128+ random bits, so a fast hash is enough and allows an indexed lookup.
  key_hash    bytea NOT NULL UNIQUE,
  -- first characters of the key, for operators to tell keys apart
  prefix      text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz
);
CREATE INDEX api_keys_account ON api_keys (account_id);

CREATE TABLE integrations (
  id               text PRIMARY KEY,
  account_id       text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name             text,
  private_key_pem  text NOT NULL,
  public_key_pem   text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX integrations_account ON integrations (account_id);

CREATE TABLE links (
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name        text,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX links_account ON links (account_id);

CREATE TABLE shops (
  account_id  text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  shop        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, shop)
);

CREATE TABLE apps (
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX apps_account ON apps (account_id);

CREATE TABLE app_grants (
  id          text PRIMARY KEY,
  app_id      text NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  account_id  text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  scopes      text[] NOT NULL,
  token_hash  bytea NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz,
  revoked_at  timestamptz
);
CREATE INDEX app_grants_app ON app_grants (app_id);

CREATE TABLE trackings (
  id                  text PRIMARY KEY,
  account_id          text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  secret_id           text NOT NULL,
  -- 'current' (secret_id form) or 'earlier' (uuid form): decides the shape of responses and callbacks
  shape               text NOT NULL CHECK (shape IN ('current', 'earlier')),
  blockchain          text NOT NULL,
  -- addresses and hashes are stored lower-case and echoed EIP-55 checksummed
  sender              text NOT NULL,
  nonce               numeric(20, 0) NOT NULL,
  receiver            text NOT NULL,
  token               text NOT NULL,
  decimals            integer NOT NULL,
  commitment          text NOT NULL CHECK (commitment IN ('confirmed', 'finalized')),
  confirmations       integer NOT NULL,
  after_block         numeric(20, 0) NOT NULL,
  amount              text NOT NULL,
  fee_amount          text,
  fee_receiver        text,
  transaction         text,
  payload             jsonb,
  callback            text,
  forward_to          text,
  forward_on_failure  boolean NOT NULL DEFAULT true,
  integration_id      text REFERENCES integrations(id),
  link_id             text REFERENCES links(id),
  shop                text,
  shopify_payment_id  text,
  status              text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'success', 'failed')),
  failed_reason       text,
  release             boolean NOT NULL DEFAULT false,
  confirmed_at        timestamptz,
  created_at          timestamptz NOT NULL,
  updated_at          timestamptz NOT NULL,
  UNIQUE (account_id, blockchain, sender, nonce),
  UNIQUE (account_id, secret_id)
);
-- The chain engine's lookups: pending trackings whose sender+nonce or transaction hash appear in a block.
CREATE INDEX trackings_pending_sender_nonce ON trackings (blockchain, sender, nonce) WHERE status = 'pending';
CREATE INDEX trackings_pending_transaction ON trackings (blockchain, transaction) WHERE status = 'pending' AND transaction IS NOT NULL;
CREATE INDEX trackings_pending_created ON trackings (created_at) WHERE status = 'pending';
CREATE INDEX trackings_link_confirmed ON trackings (link_id, confirmed_at, id) WHERE status = 'success' AND link_id IS NOT NULL;
CREATE UNIQUE INDEX trackings_shopify_payment ON trackings (account_id, shopify_payment_id) WHERE shopify_payment_id IS NOT NULL;

-- Service-wide secrets generated once and shared by every node (e.g. the callback signing key).
CREATE TABLE service_keys (
  name             text PRIMARY KEY,
  private_key_pem  text NOT NULL,
  public_key_pem   text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now()
);

-- Callback deliveries: a row is written in the same transaction as the status change it announces,
-- so a crash can delay a callback but never lose it. Workers claim due rows with FOR UPDATE SKIP LOCKED.
CREATE TABLE deliveries (
  id               text PRIMARY KEY,  -- sent as x-delivery-id on every attempt
  tracking_id      text NOT NULL REFERENCES trackings(id) ON DELETE CASCADE,
  reason           text NOT NULL,     -- 'completed' or 'redeliver'
  state            text NOT NULL DEFAULT 'due' CHECK (state IN ('due', 'delivered', 'accepted', 'dead')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL,
  locked_until     timestamptz,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE state = 'due';
CREATE INDEX deliveries_tracking ON deliveries (tracking_id);

-- Link payments page by confirmed_at: unique per link, so `after` = the last one seen never skips or repeats.
CREATE UNIQUE INDEX trackings_link_confirmed_unique ON trackings (link_id, confirmed_at) WHERE link_id IS NOT NULL AND confirmed_at IS NOT NULL;
