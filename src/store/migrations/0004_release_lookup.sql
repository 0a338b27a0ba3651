-- Release and the widget channel.
--
-- The widget subscribes by (blockchain, sender, nonce) without knowing the account, so it looks
-- trackings up across accounts in any status; the foundation index covers only pending ones.
CREATE INDEX trackings_payment ON trackings (blockchain, sender, nonce);

-- When the engine judges a replacing transaction (speed-up, cancel) it overwrites `transaction`.
-- POST /v2/payments/release accepts either hash, so the first one the record carried is kept here,
-- whichever code path replaces it.
ALTER TABLE trackings ADD COLUMN replaced_transaction text;

CREATE FUNCTION trackings_keep_replaced_transaction() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.transaction IS NOT NULL AND NEW.transaction IS DISTINCT FROM OLD.transaction THEN
    NEW.replaced_transaction := COALESCE(OLD.replaced_transaction, OLD.transaction);
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER trackings_keep_replaced_transaction
  BEFORE UPDATE OF transaction ON trackings
  FOR EACH ROW EXECUTE FUNCTION trackings_keep_replaced_transaction();
