// The judge's table (docs/api.md, "How payments are judged"): one row per case, rows in order, then
// the edges (exact/over payment, fees, replacements, canonicity, confirmations and finality, and a
// failure waiting for the same commitment as a success).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  judge,
  NATIVE_TOKEN,
  recordedTransaction,
  type Evidence,
  type Expectation,
  type Judgement,
  type MinedTransaction,
  type Transfer,
} from '../../src/domain/judge.ts'
import type { FailedReason } from '../../src/domain/tracking.ts'

const SENDER = '0x1111111111111111111111111111111111111111'
const OTHER = '0x9999999999999999999999999999999999999999'
const RECEIVER = '0x2222222222222222222222222222222222222222'
const FEE_RECEIVER = '0x3333333333333333333333333333333333333333'
const TOKEN = '0x4444444444444444444444444444444444444444'
const OTHER_TOKEN = '0x5555555555555555555555555555555555555555'
const GIVEN = `0x${'a'.repeat(64)}`
const REPLACEMENT = `0x${'b'.repeat(64)}`

const expectation = (over: Partial<Expectation> = {}): Expectation => ({
  sender: SENDER,
  nonce: 7n,
  receiver: RECEIVER,
  token: TOKEN,
  amount: 100n,
  feeReceiver: null,
  feeAmount: null,
  transaction: GIVEN,
  commitment: 'confirmed',
  confirmations: 1,
  ...over,
})
const withFee = (over: Partial<Expectation> = {}): Expectation => expectation({ feeReceiver: FEE_RECEIVER, feeAmount: 10n, ...over })

const pay = (to: string, amount: bigint, token = TOKEN): Transfer => ({ token, to, amount })

const tx = (over: Partial<MinedTransaction> = {}): MinedTransaction => ({
  hash: GIVEN,
  from: SENDER,
  nonce: 7n,
  reverted: false,
  blockNumber: 100n,
  blockHash: `0x${'c'.repeat(64)}`,
  transfers: [pay(RECEIVER, 100n)],
  ...over,
})

/** The given transaction mined and not replaced: given and consumer are the same object. */
const mined = (over: Partial<MinedTransaction> = {}, position: Partial<Evidence['position']> = {}): Evidence => {
  const t = tx(over)
  return { given: t, consumer: t, position: { head: 100n, finalized: 90n, canonical: true, ...position } }
}
/** The given transaction never mined; another one consumed the nonce. */
const replacedBy = (over: Partial<MinedTransaction> = {}): Evidence => ({
  given: null,
  consumer: tx({ hash: REPLACEMENT, ...over }),
  position: { head: 100n, finalized: 90n, canonical: true },
})
const success = (transaction = GIVEN): Judgement => ({ status: 'success', transaction })
const failed = (reason: FailedReason, transaction = GIVEN): Judgement => ({ status: 'failed', reason, transaction })
const pending = (required: number, passed: number): Judgement => ({ status: 'pending', confirmations: { required, passed } })
/** Pending, and failing with `reason` once the transaction reaches the commitment. */
const failing = (required: number, passed: number, reason: FailedReason, transaction = GIVEN): Judgement => ({
  status: 'pending',
  confirmations: { required, passed },
  failing: { reason, transaction },
})

const A = `0x${'d'.repeat(64)}`
const B = `0x${'e'.repeat(64)}`
const POSITION = { head: 100n, finalized: 90n, canonical: true }
/** A nonce-less trace: no nonce, no transaction; found by receiver among candidates. */
const trace = (over: Partial<Expectation> = {}): Expectation => expectation({ nonce: null, transaction: null, afterBlock: 50n, ...over })
/** The transactions that moved something to the receiver, in chain order. */
const among = (...candidates: MinedTransaction[]): Evidence => ({ given: null, consumer: null, candidates, position: POSITION })

const table: Array<[name: string, expectation: Expectation, evidence: Evidence, result: Judgement]> = [
  // rows of the spec, in order
  ['SENDER_MISMATCH: given sent by another address', expectation(), mined({ from: OTHER }), failed('SENDER_MISMATCH')],
  [
    'SENDER_MISMATCH wins over a wrong nonce and a revert',
    expectation(),
    mined({ from: OTHER, nonce: 8n, reverted: true }),
    failed('SENDER_MISMATCH'),
  ],
  ['SENDER_MISMATCH without a known consumer', expectation(), { ...mined({ from: OTHER }), consumer: null }, failed('SENDER_MISMATCH')],
  ['NONCE_MISMATCH: given carries another nonce', expectation(), mined({ nonce: 8n }), failed('NONCE_MISMATCH')],
  ['NONCE_MISMATCH wins over a revert', expectation(), mined({ nonce: 6n, reverted: true }), failed('NONCE_MISMATCH')],
  ['FAILED: the transaction reverted', expectation(), mined({ reverted: true, transfers: [] }), failed('FAILED')],
  ['FAILED: a reverted replacement', expectation(), replacedBy({ reverted: true, transfers: [] }), failed('FAILED', REPLACEMENT)],
  [
    'TRANSACTION_MISMATCH: a cancel (replacement paying nothing)',
    expectation(),
    replacedBy({ transfers: [] }),
    failed('TRANSACTION_MISMATCH', REPLACEMENT),
  ],
  [
    'TRANSACTION_MISMATCH: a replacement paying too little',
    expectation(),
    replacedBy({ transfers: [pay(RECEIVER, 99n)] }),
    failed('TRANSACTION_MISMATCH', REPLACEMENT),
  ],
  ['RECEIVER_MISMATCH: nothing reached the receiver', expectation(), mined({ transfers: [pay(OTHER, 100n)] }), failed('RECEIVER_MISMATCH')],
  [
    'RECEIVER_MISMATCH: zero-value transfer to the receiver counts as nothing',
    expectation(),
    mined({ transfers: [pay(RECEIVER, 0n, OTHER_TOKEN)] }),
    failed('RECEIVER_MISMATCH'),
  ],
  [
    'TOKEN_MISMATCH: another token reached the receiver',
    expectation(),
    mined({ transfers: [pay(RECEIVER, 100n, OTHER_TOKEN)] }),
    failed('TOKEN_MISMATCH'),
  ],
  [
    'TOKEN_MISMATCH: native sent where a token was expected',
    expectation(),
    mined({ transfers: [pay(RECEIVER, 100n, NATIVE_TOKEN)] }),
    failed('TOKEN_MISMATCH'),
  ],
  ['AMOUNT_MISMATCH: one unit short', expectation(), mined({ transfers: [pay(RECEIVER, 99n)] }), failed('AMOUNT_MISMATCH')],
  ['MISMATCH: fee short, amount paid', withFee(), mined({ transfers: [pay(RECEIVER, 100n), pay(FEE_RECEIVER, 9n)] }), failed('MISMATCH')],
  ['MISMATCH: fee missing entirely', withFee(), mined({ transfers: [pay(RECEIVER, 100n)] }), failed('MISMATCH')],
  [
    'MISMATCH: fee paid in another token',
    withFee(),
    mined({ transfers: [pay(RECEIVER, 100n), pay(FEE_RECEIVER, 10n, OTHER_TOKEN)] }),
    failed('MISMATCH'),
  ],
  [
    'MISMATCH: amount short and fee short',
    withFee(),
    mined({ transfers: [pay(RECEIVER, 50n), pay(FEE_RECEIVER, 5n)] }),
    failed('MISMATCH'),
  ],
  ['MISMATCH: wrong receiver and fee short', withFee(), mined({ transfers: [pay(OTHER, 110n)] }), failed('MISMATCH')],
  ['success: paid, one confirmation required and the inclusion block is the head', expectation(), mined(), success()],

  // amounts
  ['exact amount succeeds', expectation({ amount: 100n }), mined({ transfers: [pay(RECEIVER, 100n)] }), success()],
  ['overpayment succeeds', expectation(), mined({ transfers: [pay(RECEIVER, 1000n)] }), success()],
  [
    'transfers to the receiver are summed per token',
    expectation(),
    mined({ transfers: [pay(RECEIVER, 60n), pay(RECEIVER, 40n), pay(RECEIVER, 500n, OTHER_TOKEN)] }),
    success(),
  ],
  [
    'addresses compare case-insensitively',
    expectation({ token: NATIVE_TOKEN }),
    mined({
      from: SENDER.toUpperCase().replace('0X', '0x'),
      transfers: [pay(RECEIVER.toUpperCase().replace('0X', '0x'), 100n, '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE')],
    }),
    success(),
  ],
  [
    'native payment: token transfers to the receiver do not count',
    expectation({ token: NATIVE_TOKEN }),
    mined({ transfers: [pay(RECEIVER, 100n, TOKEN)] }),
    failed('TOKEN_MISMATCH'),
  ],

  // fees
  ['fee exact succeeds', withFee(), mined({ transfers: [pay(RECEIVER, 100n), pay(FEE_RECEIVER, 10n)] }), success()],
  ['fee overpaid succeeds', withFee(), mined({ transfers: [pay(RECEIVER, 100n), pay(FEE_RECEIVER, 11n)] }), success()],
  [
    'fee receiver = receiver: amount + fee required',
    withFee({ feeReceiver: RECEIVER }),
    mined({ transfers: [pay(RECEIVER, 110n)] }),
    success(),
  ],
  [
    'fee receiver = receiver: only amount paid is a MISMATCH',
    withFee({ feeReceiver: RECEIVER }),
    mined({ transfers: [pay(RECEIVER, 100n)] }),
    failed('MISMATCH'),
  ],
  ['zero fee needs nothing at the fee receiver', withFee({ feeAmount: 0n }), mined(), success()],

  // replacements
  ['replacement that pays succeeds with the new hash', expectation(), replacedBy(), success(REPLACEMENT)],
  [
    'replacement hash compared case-insensitively',
    expectation({ transaction: GIVEN.toUpperCase().replace('0X', '0x') }),
    mined(),
    success(),
  ],
  [
    'trace (no given transaction): the consumer is judged by its own mismatch',
    expectation({ transaction: null }),
    replacedBy({ transfers: [pay(RECEIVER, 1n)] }),
    failed('AMOUNT_MISMATCH', REPLACEMENT),
  ],
  ['trace that pays succeeds with the found hash', expectation({ transaction: null }), replacedBy(), success(REPLACEMENT)],

  // nothing consumed yet
  [
    'nonce not consumed yet: pending, nothing passed',
    expectation({ confirmations: 3 }),
    { given: null, consumer: null, position: { head: 100n, finalized: 90n, canonical: false } },
    pending(3, 0),
  ],
  ['given mined but consumer not filled in: given is judged', expectation(), { ...mined(), consumer: null }, success()],
  [
    'a consumer from another sender consumed nothing: pending',
    expectation({ transaction: null }),
    replacedBy({ from: OTHER }),
    pending(1, 0),
  ],
  ['a consumer at another nonce consumed nothing: pending', expectation({ transaction: null }), replacedBy({ nonce: 8n }), pending(1, 0)],
  [
    'a given transaction that pays stands beside a consumer from another sender',
    expectation(),
    { ...mined(), consumer: tx({ hash: REPLACEMENT, from: OTHER }) },
    success(),
  ],

  // confirmations (the inclusion block is the first)
  ['confirmations 3: pending at 1', expectation({ confirmations: 3 }), mined({}, { head: 100n }), pending(3, 1)],
  ['confirmations 3: pending at 2', expectation({ confirmations: 3 }), mined({}, { head: 101n }), pending(3, 2)],
  ['confirmations 3: success at 3', expectation({ confirmations: 3 }), mined({}, { head: 102n }), success()],
  ['confirmations 3: success beyond 3', expectation({ confirmations: 3 }), mined({}, { head: 150n }), success()],
  ['confirmations 1: head behind the inclusion block is pending', expectation(), mined({}, { head: 99n }), pending(1, 0)],
  [
    'non-canonical inclusion block: pending, nothing passed',
    expectation({ confirmations: 3 }),
    mined({}, { head: 110n, canonical: false }),
    pending(3, 0),
  ],
  ['non-canonical with one confirmation required: pending', expectation(), mined({}, { canonical: false }), pending(1, 0)],

  // finality (required = head − finalized + 1, the chain's current lag)
  [
    'finalized: block above the finalized one is pending',
    expectation({ commitment: 'finalized' }),
    mined({}, { head: 100n, finalized: 98n }),
    pending(3, 1),
  ],
  [
    'finalized: one block later still pending',
    expectation({ commitment: 'finalized' }),
    mined({}, { head: 101n, finalized: 99n }),
    pending(3, 2),
  ],
  [
    'finalized: block at the finalized one succeeds',
    expectation({ commitment: 'finalized' }),
    mined({}, { head: 102n, finalized: 100n }),
    success(),
  ],
  [
    'finalized: block below the finalized one succeeds',
    expectation({ commitment: 'finalized' }),
    mined({}, { head: 200n, finalized: 150n }),
    success(),
  ],
  [
    'finalized: an irregular tag never shows required as passed',
    expectation({ commitment: 'finalized' }),
    mined({}, { head: 110n, finalized: 99n }),
    pending(12, 11),
  ],
  [
    'finalized: non-canonical block below finalized is pending',
    expectation({ commitment: 'finalized' }),
    mined({}, { head: 102n, finalized: 100n, canonical: false }),
    pending(3, 0),
  ],
  [
    'finalized: nothing consumed yet',
    expectation({ commitment: 'finalized' }),
    { given: null, consumer: null, position: { head: 100n, finalized: 98n, canonical: false } },
    pending(3, 0),
  ],

  // a failure waits for the same commitment as success (pending meanwhile, naming what it would fail with)
  [
    'AMOUNT_MISMATCH with confirmations 3: pending at 1',
    expectation({ confirmations: 3 }),
    mined({ transfers: [pay(RECEIVER, 99n)] }, { head: 100n }),
    failing(3, 1, 'AMOUNT_MISMATCH'),
  ],
  [
    'AMOUNT_MISMATCH with confirmations 3: pending at 2 (one block before the verdict)',
    expectation({ confirmations: 3 }),
    mined({ transfers: [pay(RECEIVER, 99n)] }, { head: 101n }),
    failing(3, 2, 'AMOUNT_MISMATCH'),
  ],
  [
    'AMOUNT_MISMATCH with confirmations 3: failed at 3',
    expectation({ confirmations: 3 }),
    mined({ transfers: [pay(RECEIVER, 99n)] }, { head: 102n }),
    failed('AMOUNT_MISMATCH'),
  ],
  [
    'a failing transaction whose block is not canonical: pending, nothing passed',
    expectation(),
    mined({ transfers: [pay(RECEIVER, 99n)] }, { canonical: false }),
    failing(1, 0, 'AMOUNT_MISMATCH'),
  ],
  [
    'a failing transaction with the head behind its block: pending',
    expectation(),
    mined({ reverted: true, transfers: [] }, { head: 99n }),
    failing(1, 0, 'FAILED'),
  ],
  [
    "SENDER_MISMATCH waits for the given transaction's confirmations",
    expectation({ confirmations: 2 }),
    mined({ from: OTHER }),
    failing(2, 1, 'SENDER_MISMATCH'),
  ],
  [
    "SENDER_MISMATCH counts from the given transaction's own block",
    expectation({ confirmations: 2 }),
    {
      given: tx({ from: OTHER, blockNumber: 99n }),
      consumer: tx({ hash: REPLACEMENT }),
      position: { head: 100n, finalized: 90n, canonical: true },
    },
    failed('SENDER_MISMATCH'),
  ],
  [
    "TRANSACTION_MISMATCH waits for the replacement's confirmations",
    expectation({ confirmations: 2 }),
    replacedBy({ transfers: [] }),
    failing(2, 1, 'TRANSACTION_MISMATCH', REPLACEMENT),
  ],
  [
    'finalized: a mismatch above the finalized block is pending',
    expectation({ commitment: 'finalized' }),
    mined({ transfers: [pay(RECEIVER, 1n)] }, { head: 100n, finalized: 98n }),
    failing(3, 1, 'AMOUNT_MISMATCH'),
  ],
  [
    'finalized: a mismatch with an irregular tag never shows required as passed',
    expectation({ commitment: 'finalized' }),
    mined({ transfers: [pay(RECEIVER, 1n)] }, { head: 110n, finalized: 99n }),
    failing(12, 11, 'AMOUNT_MISMATCH'),
  ],
  [
    'finalized: a mismatch at the finalized block fails',
    expectation({ commitment: 'finalized' }),
    mined({ transfers: [pay(RECEIVER, 1n)] }, { head: 102n, finalized: 100n }),
    failed('AMOUNT_MISMATCH'),
  ],
  [
    'finalized: a mismatch below the finalized block but not canonical is pending',
    expectation({ commitment: 'finalized' }),
    mined({ transfers: [pay(RECEIVER, 1n)] }, { head: 102n, finalized: 100n, canonical: false }),
    failing(3, 0, 'AMOUNT_MISMATCH'),
  ],

  // payments without a nonce (docs/api.md, "Payments without a nonce"): a trace found by receiver
  ['nonce-less: the first candidate that pays in full wins', trace(), among(tx({ hash: A }), tx({ hash: B })), success(A)],
  [
    'nonce-less: a short candidate is ignored, the next full one pays',
    trace(),
    among(tx({ hash: A, transfers: [pay(RECEIVER, 99n)] }), tx({ hash: B })),
    success(B),
  ],
  [
    'nonce-less: another token is ignored, never TOKEN_MISMATCH',
    trace(),
    among(tx({ hash: A, transfers: [pay(RECEIVER, 100n, OTHER_TOKEN)] })),
    pending(1, 0),
  ],
  [
    'nonce-less: a reverted candidate is ignored, never FAILED',
    trace(),
    among(tx({ hash: A, reverted: true, transfers: [] })),
    pending(1, 0),
  ],
  ['nonce-less: a candidate from another sender is not the payment', trace(), among(tx({ hash: A, from: OTHER })), pending(1, 0)],
  ['nonce-less, sender-less: any sender pays', trace({ sender: null }), among(tx({ hash: A, from: OTHER })), success(A)],
  ['nonce-less: mined at or before after_block is not the payment', trace({ afterBlock: 100n }), among(tx({ hash: A })), pending(1, 0)],
  ['nonce-less: mined at the deadline pays', trace({ deadline: 1_000n }), among(tx({ hash: A, blockTimestamp: 1_000n })), success(A)],
  [
    'nonce-less: mined past the deadline is not the payment',
    trace({ deadline: 1_000n }),
    among(tx({ hash: A, blockTimestamp: 1_001n })),
    pending(1, 0),
  ],
  [
    'nonce-less: a short fee is not the payment, a full fee is',
    trace({ feeReceiver: FEE_RECEIVER, feeAmount: 10n }),
    among(
      tx({ hash: A, transfers: [pay(RECEIVER, 100n), pay(FEE_RECEIVER, 9n)] }),
      tx({ hash: B, transfers: [pay(RECEIVER, 100n), pay(FEE_RECEIVER, 10n)] }),
    ),
    success(B),
  ],
  ['nonce-less: the payment waits for its confirmations', trace({ confirmations: 3 }), among(tx({ hash: A })), pending(3, 1)],
  [
    'nonce-less: no payment, the first block past the deadline has the commitment: TRACKING_TIMED_OUT',
    trace({ deadline: 1_000n }),
    { ...among(), pastDeadline: { blockNumber: 100n } },
    { status: 'failed', reason: 'TRACKING_TIMED_OUT', transaction: null },
  ],
  [
    'nonce-less: past the deadline but that block not confirmed enough yet: pending',
    trace({ deadline: 1_000n, confirmations: 3 }),
    { ...among(), pastDeadline: { blockNumber: 100n } },
    pending(3, 1),
  ],
  [
    'nonce-less: a payment found before the deadline wins over the deadline',
    trace({ deadline: 1_000n }),
    { ...among(tx({ hash: A, blockTimestamp: 999n })), pastDeadline: { blockNumber: 100n } },
    success(A),
  ],
  [
    'nonce-less with a transaction: its sender and nonce are taken, paid: success',
    expectation({ nonce: null, sender: null }),
    mined({ nonce: 12n }),
    success(),
  ],
  [
    'nonce-less with a transaction: a given sender that differs is SENDER_MISMATCH',
    expectation({ nonce: null }),
    mined({ from: OTHER }),
    failed('SENDER_MISMATCH'),
  ],
  [
    'nonce-less with a transaction: judged as section 3 (short: AMOUNT_MISMATCH)',
    expectation({ nonce: null }),
    mined({ transfers: [pay(RECEIVER, 99n)] }),
    failed('AMOUNT_MISMATCH'),
  ],
  [
    'nonce-less with a transaction: mined at the deadline pays',
    expectation({ nonce: null, deadline: 1_000n }),
    mined({ blockTimestamp: 1_000n }),
    success(),
  ],
  [
    'nonce-less with a transaction: mined past the deadline is not the payment',
    expectation({ nonce: null, deadline: 1_000n }),
    mined({ blockTimestamp: 1_001n }),
    pending(1, 0),
  ],
  [
    'nonce-less with a transaction, its nonce known: a replacement past the deadline is not the payment either',
    expectation({ deadline: 1_000n }),
    replacedBy({ blockTimestamp: 1_001n }),
    pending(1, 0),
  ],
  [
    'nonce-less with a transaction: not mined when the first block past the deadline has the commitment: TRACKING_TIMED_OUT',
    expectation({ nonce: null, deadline: 1_000n }),
    { given: null, consumer: null, pastDeadline: { blockNumber: 100n }, position: POSITION },
    { status: 'failed', reason: 'TRACKING_TIMED_OUT', transaction: null },
  ],
  [
    'nonce-less with a transaction: a replacement at its nonce is judged instead',
    expectation({ nonce: null }),
    { ...replacedBy({ transfers: [pay(RECEIVER, 100n)] }), given: tx({ hash: GIVEN }), consumer: tx({ hash: REPLACEMENT }) },
    success(REPLACEMENT),
  ],
  [
    'nonce-less with a transaction not mined yet: pending',
    expectation({ nonce: null }),
    { given: null, consumer: null, position: POSITION },
    pending(1, 0),
  ],
]

for (const [name, exp, evidence, result] of table) {
  test(name, () => {
    assert.deepEqual(judge(exp, evidence), result)
  })
}

test('the table covers every failed reason the judge decides', () => {
  const reasons = new Set(table.map(([, , , r]) => (r.status === 'failed' ? r.reason : null)).filter(Boolean))
  for (const reason of [
    'SENDER_MISMATCH',
    'NONCE_MISMATCH',
    'FAILED',
    'TRANSACTION_MISMATCH',
    'RECEIVER_MISMATCH',
    'TOKEN_MISMATCH',
    'AMOUNT_MISMATCH',
    'MISMATCH',
  ] as const)
    assert.ok(reasons.has(reason), reason)
})

test('recordedTransaction: a paying replacement takes over, a failing one does not', () => {
  assert.equal(recordedTransaction(expectation(), success(REPLACEMENT)), REPLACEMENT)
  assert.equal(recordedTransaction(expectation(), failed('TRANSACTION_MISMATCH', REPLACEMENT)), GIVEN)
  assert.equal(recordedTransaction(expectation({ transaction: null }), failed('FAILED', REPLACEMENT)), REPLACEMENT)
  assert.equal(recordedTransaction(expectation({ transaction: null }), pending(1, 0)), null)
})
