-- A block's verdicts written in one statement, without a transaction (docs/architecture.md, "Write"): the
-- statement checks that every tracking is still as the engine read it and that the chain's lease holds,
-- and fails as a whole, writing nothing, when one of them does not. This function is that failure:
-- SQLSTATE PW001, which the service answers by writing the batch the long way (lock, then write).
CREATE FUNCTION paywatch_expect(ok boolean) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION 'the batch no longer reads as it was judged' USING ERRCODE = 'PW001';
  END IF;
  RETURN true;
END
$$;
