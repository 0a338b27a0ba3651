import { backoffPolicies, delayFor, type BackoffPolicy } from '../common/backoff.ts'
import type { Clock } from '../common/clock.ts'

/**
 * The trackings whose providers disagree on the evidence with no quorum among them. While they do,
 * the tracking's evidence is checked again after a growing pause (`backoffPolicies.quorumDispute`),
 * not on every block: two contradicting providers would otherwise be asked about every such payment
 * on every block. A dispute is reported (counted and logged) once per tracking and state: the same
 * answers again are the same dispute.
 */
export interface QuorumDisputes {
  /** Tracking `id`'s providers disagreed and its pause is not over: do not ask them now. */
  waiting(id: string): boolean
  /**
   * Tracking `id`'s providers disagree, their answers summed up by `state`: its next check waits.
   * True when the dispute is new or its state changed (report it), false when it is the same as before.
   */
  disputed(id: string, state: string): boolean
  /** Tracking `id`'s evidence is settled (a quorum agreed, or no disagreement): forgotten. */
  settled(id: string): void
}

/** Disputes remembered at most (the oldest go first; a forgotten one is reported again if it goes on). */
const LIMIT = 50_000

export function createQuorumDisputes(deps: { clock: Clock; policy?: BackoffPolicy; random?: () => number }): QuorumDisputes {
  const policy = deps.policy ?? backoffPolicies.quorumDispute
  const disputes = new Map<string, { state: string; failures: number; notBefore: number }>()
  const now = () => deps.clock().getTime()
  return {
    waiting(id) {
      const dispute = disputes.get(id)
      return dispute !== undefined && dispute.notBefore > now()
    },
    disputed(id, state) {
      const before = disputes.get(id)
      const changed = before?.state !== state
      const failures = changed ? 1 : before.failures + 1
      disputes.delete(id)
      disputes.set(id, { state, failures, notBefore: now() + delayFor(policy, failures, deps.random) })
      if (disputes.size > LIMIT) disputes.delete(disputes.keys().next().value!)
      return changed
    },
    settled(id) {
      disputes.delete(id)
    },
  }
}
