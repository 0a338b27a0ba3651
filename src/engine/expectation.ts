import { toBaseUnits } from '../domain/amount.ts'
import { NATIVE_TOKEN, type Expectation } from '../domain/judge.ts'
import type { Tracking } from '../domain/tracking.ts'

/** What the judge expects of a tracking: amounts in base units, addresses and hashes lower-case. */
export function expectationOf(tracking: Tracking): Expectation {
  return {
    sender: tracking.sender?.toLowerCase() ?? null,
    nonce: tracking.nonce,
    receiver: tracking.receiver.toLowerCase(),
    token: tracking.token.toLowerCase(),
    amount: toBaseUnits(tracking.amount, tracking.decimals),
    feeReceiver: tracking.feeReceiver?.toLowerCase() ?? null,
    feeAmount: tracking.feeAmount === null ? null : toBaseUnits(tracking.feeAmount, tracking.decimals),
    transaction: tracking.transaction?.toLowerCase() ?? null,
    commitment: tracking.commitment,
    confirmations: tracking.confirmations,
    afterBlock: tracking.afterBlock,
    // A deadline binds a payment without a nonce only (docs/api.md, "Payments without a nonce").
    deadline: tracking.nonceless ? tracking.deadline : null,
  }
}

export const paysNative = (tracking: Pick<Tracking, 'token'>): boolean => tracking.token.toLowerCase() === NATIVE_TOKEN
