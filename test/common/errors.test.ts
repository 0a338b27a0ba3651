// The service's error model: retrying is decided by type (no flag), every error of the model
// carries a short message, a stable code, a name and its cause, and errors of no known type follow
// the one documented rule (retryable).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { HttpRequestError } from 'viem'
import {
  ChainUnavailableError,
  isChainError,
  NonRetryableChainError,
  RetryableChainError,
  TokenNotFoundError,
} from '../../src/chain/errors.ts'
import { isRetryable, NonRetryableError, PaywatchError, RetryableError } from '../../src/common/errors.ts'
import { LeadershipLostError } from '../../src/store/chain-leases.ts'
import { SealedSecretError } from '../../src/store/sealed-secret.ts'

test('retryable or not is the type; unknown errors are retryable', () => {
  for (const error of [new RetryableError('x'), new RetryableChainError('x'), new ChainUnavailableError('x')]) {
    assert.equal(isRetryable(error), true, error.name)
  }
  for (const error of [
    new NonRetryableError('x'),
    new NonRetryableChainError('x'),
    new TokenNotFoundError('x'),
    new LeadershipLostError('ethereum'),
    new SealedSecretError('x'),
  ]) {
    assert.equal(isRetryable(error), false, error.name)
  }
  const network = new HttpRequestError({ url: 'http://127.0.0.1:1', details: 'fetch failed' })
  for (const error of [
    new Error('plain'),
    network,
    Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    'a string',
  ]) {
    assert.equal(isRetryable(error), true, String(error))
  }
  assert.ok(!('retryable' in new RetryableChainError('x')), 'no flag to keep in step with the type')
})

test('short message, details, cause, code and name', () => {
  const cause = new Error('socket hang up')
  const error = new ChainUnavailableError('the chain RPC did not answer', { cause, details: 'three URLs tried' })
  assert.ok(error instanceof PaywatchError && error instanceof RetryableError && error instanceof Error)
  assert.equal(error.message, 'the chain RPC did not answer', 'the message stays the short one (logs, CLI)')
  assert.equal(error.shortMessage, error.message)
  assert.equal(error.details, 'three URLs tried')
  assert.equal(error.cause, cause)
  assert.equal(error.code, 'CHAIN_UNAVAILABLE')
  assert.equal(error.name, 'ChainUnavailableError')
  assert.equal(new LeadershipLostError('ethereum').code, 'LEADERSHIP_LOST')
  assert.equal(new LeadershipLostError('ethereum').message, 'this node no longer leads chain ethereum: write refused')
  assert.equal(new TokenNotFoundError('x').code, 'TOKEN_NOT_FOUND')
  assert.ok(isChainError(new TokenNotFoundError('x')) && isChainError(error) && !isChainError(new SealedSecretError('x')))
})
