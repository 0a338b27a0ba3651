import { AmountError, toBaseUnits } from '../domain/amount.ts'
import type { FieldError } from '../domain/field-errors.ts'
import { compareRepeat } from '../domain/identity.ts'
import type { PaymentRequest } from '../domain/payment-request.ts'
import type { ReferenceCheck } from '../domain/reference-check.ts'
import type { Tracking } from '../domain/tracking.ts'
import { ChainUnavailableError, TokenNotFoundError } from '../chain/errors.ts'
import type { ChainHandle, ChainRegistry } from '../chain/registry.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { newId } from '../store/ids.ts'
import { attachTransaction, findTrackingByIdentityOrSecret, findTrackingBySecret, insertTracking } from '../store/trackings.ts'
import type { Clock } from '../common/clock.ts'

export type CreateOutcome =
  | { kind: 'created'; tracking: Tracking }
  /** `attached`: this request gave the stored trace its transaction. */
  | { kind: 'existing'; tracking: Tracking; attached?: boolean }
  | { kind: 'conflict'; detail: string }
  | { kind: 'invalid'; errors: FieldError[] }
  | { kind: 'unsupported-chain' }
  | { kind: 'chain-unavailable' }
  | { kind: 'not-found'; detail: string }

export interface CreatePaymentDeps {
  db: Db
  chains: ChainRegistry
  now: Clock
  /**
   * Checks of what a new tracking refers to (integration, link, shop, callback host), run in order
   * before it is stored; the first refusal is the answer.
   */
  referenceChecks?: ReferenceCheck[]
  /** Stores a new tracking (undefined: one with its identity or secret exists); `insertTracking` by default. */
  insertTracking?: (tracking: Tracking) => Promise<Tracking | undefined>
}

/**
 * POST /v2/payments after the body was read: one tracking per (account, blockchain, sender, nonce);
 * a repeat answers the stored record (attaching a transaction to a trace), a different payment under
 * the same identity or secret is a conflict.
 *
 * Insert first: a new payment, the common case, costs one insert (shared with concurrent creates). Only
 * when the insert conflicts, or a check refuses the request, is the stored tracking looked up; a request
 * repeating it is then answered as a repeat whatever the checks said (a retry never fails where the first
 * attempt succeeded).
 */
export async function createPayment(deps: CreatePaymentDeps, accountId: string, request: PaymentRequest): Promise<CreateOutcome> {
  const chain = deps.chains.get(request.blockchain)
  if (!chain) return { kind: 'unsupported-chain' }

  const checked = await checkNewTracking(deps, chain, accountId, request)
  if (checked.kind !== 'ok') {
    const existing = await findExisting(deps.db, accountId, request)
    return existing ? answerRepeat(deps, existing, request) : checked
  }
  const now = deps.now()
  const tracking: Tracking = {
    ...request,
    id: newId(),
    accountId,
    decimals: checked.decimals,
    status: 'pending',
    failedReason: null,
    release: false,
    confirmedAt: null,
    createdAt: now,
    updatedAt: now,
  }
  const created = await (deps.insertTracking ? deps.insertTracking(tracking) : insertTracking(deps.db, tracking))
  if (created) return { kind: 'created', tracking: created }
  // A tracking with this identity or secret exists (stored before, or by a concurrent request).
  const existing = await findExisting(deps.db, accountId, request)
  return existing ? answerRepeat(deps, existing, request) : { kind: 'conflict', detail: 'a conflicting tracking exists' }
}

/** What a new tracking needs: the token's decimals (amounts must fit them) and the reference checks. */
async function checkNewTracking(
  deps: CreatePaymentDeps,
  chain: ChainHandle,
  accountId: string,
  request: PaymentRequest,
): Promise<CreateOutcome | { kind: 'ok'; decimals: number }> {
  let decimals: number
  try {
    decimals = await chain.decimalsOf(request.token)
  } catch (error) {
    if (error instanceof TokenNotFoundError) return { kind: 'invalid', errors: [{ path: 'token', message: error.shortMessage }] }
    if (error instanceof ChainUnavailableError) return { kind: 'chain-unavailable' }
    throw error
  }
  const errors: FieldError[] = []
  for (const [path, value] of [
    ['amount', request.amount],
    ['fee_amount', request.feeAmount],
  ] as const) {
    if (value === null) continue
    try {
      toBaseUnits(value, decimals)
    } catch (error) {
      if (!(error instanceof AmountError)) throw error
      errors.push({ path, message: error.message })
    }
  }
  if (errors.length > 0) return { kind: 'invalid', errors }

  for (const check of deps.referenceChecks ?? []) {
    const refused = await check(accountId, request)
    if (refused) return refused
  }
  return { kind: 'ok', decimals }
}

/** The account's tracking of this payment, else the one under this secret (one query). */
function findExisting(db: Db, accountId: string, request: PaymentRequest): Promise<Tracking | undefined> {
  return findTrackingByIdentityOrSecret(db, {
    accountId,
    blockchain: request.blockchain,
    sender: request.sender,
    nonce: request.nonce,
    secretId: request.secretId,
  })
}

async function answerRepeat(deps: CreatePaymentDeps, existing: Tracking, request: PaymentRequest): Promise<CreateOutcome> {
  const repeat = compareRepeat(existing, request)
  if (repeat.kind === 'conflict') return { kind: 'conflict', detail: repeat.detail }
  if (repeat.kind === 'attach-transaction' && existing.status === 'pending') {
    const updated = await attachTransaction(deps.db, existing.id, repeat.transaction, deps.now())
    if (updated) return { kind: 'existing', tracking: updated, attached: true }
    // Changed since it was read: a concurrent request attached a transaction (this one must then be the
    // same, else it conflicts), or the trace completed (final: answered as it is).
    const current = (await findTrackingBySecret(deps.db, existing.accountId, existing.secretId)) ?? existing
    const again = compareRepeat(current, request)
    if (again.kind === 'conflict') return { kind: 'conflict', detail: again.detail }
    return { kind: 'existing', tracking: current }
  }
  return { kind: 'existing', tracking: existing }
}
