import type { Logger } from 'pino'
import { isTransient } from '../chain/errors.ts'
import { isRpcFailure, rpcFailureFields } from '../chain/rpc-failure.ts'

/**
 * One line per failed sync. A provider having a bad moment (timeout, dropped connection, 5xx,
 * rate limit) is expected: a warning naming the provider and the error, no stack trace. An RPC
 * answer that asking again will not change (invalid params, a malformed block) is an error the
 * operator must see. Anything else (the database, a bug) keeps its stack.
 */
export function logSyncFailure(log: Logger, error: unknown, fields: { block: bigint | undefined; retryInMs: number }): void {
  if (isTransient(error)) log.warn({ ...rpcFailureFields(error), ...fields }, 'chain sync failed; retrying')
  else if (isRpcFailure(error))
    log.error({ ...rpcFailureFields(error), ...fields }, 'chain sync failed: the RPC answer cannot be used (not a passing failure)')
  else log.error({ err: error, ...fields }, 'chain sync failed; retrying')
}
