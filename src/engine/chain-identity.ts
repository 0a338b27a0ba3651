import type { Logger } from 'pino'
import type { ChainHandle } from '../chain/registry.ts'
import { RetryableChainError } from '../chain/errors.ts'
import type { Clock } from '../common/clock.ts'
import { recordChainIdentity, type ChainIdentity } from '../store/chain-identities.ts'
import type { Db } from '../store/infrastructure/database.ts'

/** The early block whose hash identifies a chain: the genesis block, which every node keeps. */
const IDENTITY_BLOCK = 0n

export interface IdentityCheck {
  /**
   * Asks every provider not refused yet for its chain id and its early block's hash, records the
   * chain's identity on the first follow, and refuses (for good, one error line naming the URL)
   * each provider that serves another chain. True while at least one provider serves the chain,
   * false when every provider was refused; throws a RetryableChainError when none could be asked.
   */
  verify(): Promise<boolean>
}

export function createIdentityCheck(deps: { handle: ChainHandle; db: Db; clock: Clock; logger: Logger }): IdentityCheck {
  const { handle } = deps
  const { pool, config } = handle

  /** One provider's identity, or undefined when it did not answer (not refused for that). */
  const observe = async (index: number): Promise<ChainIdentity | undefined> => {
    const client = handle.providerClients[index]!
    try {
      const chainId = await client.getChainId()
      if (chainId !== config.chainId) {
        pool.refuse(index, `it serves chain id ${chainId}, not ${config.name}'s ${config.chainId}`)
        return undefined
      }
      const block = await client.getBlock({ blockNumber: IDENTITY_BLOCK })
      return { chainId, blockNumber: IDENTITY_BLOCK, blockHash: block.hash!.toLowerCase() }
    } catch {
      // Unreachable now: its own requests log the failure; it is checked again on the next round.
      return undefined
    }
  }

  /** The recorded identity: the first answer recorded it when none was (every node gets the same one back). */
  let recorded: Promise<ChainIdentity> | undefined

  /** True when provider `index` serves the recorded chain; refuses it when it serves another. */
  const check = async (index: number): Promise<boolean> => {
    const seen = await observe(index)
    if (!seen) return false
    recorded ??= recordChainIdentity(deps.db, config.name, seen, deps.clock())
    const known = await recorded.catch((error: unknown) => {
      recorded = undefined
      throw error
    })
    if (known.chainId !== config.chainId) {
      pool.refuse(index, `the stored progress belongs to chain id ${known.chainId}, not ${config.chainId}`)
      return false
    }
    if (seen.blockHash === known.blockHash) return true
    pool.refuse(
      index,
      `it serves another chain under chain id ${config.chainId} (block ${known.blockNumber} is ${seen.blockHash}, ` +
        `the stored progress belongs to ${known.blockHash}); a restarted development node needs a fresh data directory`,
    )
    return false
  }

  return {
    async verify() {
      const checks = pool.serving().map((p) => check(p.index))
      // Ready as soon as one provider proved the chain; the others finish their check meanwhile.
      const one = await Promise.any(checks.map((c) => c.then((ok) => (ok ? true : Promise.reject(new Error('no'))))))
        .then(() => true)
        .catch(() => false)
      if (one) return true
      await Promise.allSettled(checks)
      if (pool.serving().length === 0) return false
      throw new RetryableChainError('no RPC provider answered the identity check')
    },
  }
}
