import type { Logger } from 'pino'
import { isMethodUnavailable } from '../chain/errors.ts'
import type { Capability } from '../chain/provider-pool.ts'
import type { ChainHandle } from '../chain/registry.ts'
import type { IdentityCheck } from './chain-identity.ts'

const ZERO_HASH = `0x${'0'.repeat(64)}`

/** The probe of each capability: a request whose only possible "no" is "method not offered". */
const probes: Record<Capability, { method: string; params: unknown[] }> = {
  eth_getBlockReceipts: { method: 'eth_getBlockReceipts', params: ['latest'] },
  debug_traceTransaction: { method: 'debug_traceTransaction', params: [ZERO_HASH, { tracer: 'callTracer' }] },
  trace_transaction: { method: 'trace_transaction', params: [ZERO_HASH] },
}

export interface ProviderMonitor {
  /** Probes every provider's capabilities (once) and head, and checks their identity again (unless `identity` is false). */
  round(identity?: boolean): Promise<void>
  start(): void
  stop(): void
}

/** While the follower is fed by newHeads, one probe round in this many intervals. */
const QUIET_EVERY = 6

/**
 * Keeps what the pool knows of each provider fresh: its head (for lag and readiness: a provider
 * is asked for its own latest block, so a lagging one shows), its capabilities (probed once: any
 * answer but "method not offered" counts as offered), and its identity (a node restarted under the
 * same URL serves another chain from then on: refused).
 */
export function createProviderMonitor(deps: {
  handle: ChainHandle
  identity: IdentityCheck
  logger: Logger
  intervalMs: number
  /**
   * True while the follower is fed by a live `newHeads` subscription and synced: its heads show the
   * providers serve, so the probes run every `QUIET_EVERY`th interval (they cost a block's worth of requests).
   */
  quiet?: () => boolean
}): ProviderMonitor {
  const { pool, providerClients } = deps.handle
  const probed = new Set<number>()
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined

  const probeCapabilities = async (index: number) => {
    const client = providerClients[index]!
    const offered = await Promise.all(
      (Object.keys(probes) as Capability[]).map(async (capability) => {
        try {
          await client.request(probes[capability] as never)
          return capability
        } catch (error) {
          return isMethodUnavailable(error) ? undefined : capability
        }
      }),
    )
    pool.providers[index]!.capabilities = new Set(offered.filter((c): c is Capability => c !== undefined))
    probed.add(index)
  }

  const probeHead = async (index: number): Promise<boolean> => {
    try {
      const head = await providerClients[index]!.getBlockNumber({ cacheTime: 0 })
      pool.setHead(index, head)
      return true
    } catch {
      // The failure is counted and logged by the pool.
      return false
    }
  }

  const round = async (identity: boolean) => {
    if (identity) await deps.identity.verify().catch(() => {})
    await Promise.all(
      pool.serving().map(async (p) => {
        // A provider that keeps failing is not probed on top (its own requests show when it is back);
        // capabilities are probed once the provider answers at all.
        if (pool.stateOf(p.index) === 'failing') return
        if ((await probeHead(p.index)) && !probed.has(p.index)) await probeCapabilities(p.index).catch(() => {})
      }),
    )
  }

  return {
    round(identity = true) {
      running ??= round(identity).finally(() => {
        running = undefined
      })
      return running
    },
    start() {
      // The first round runs beside the runner's own identity check at start: not twice.
      let identity = false
      let skipped = 0
      const tick = () => {
        if (identity && skipped < QUIET_EVERY - 1 && deps.quiet?.()) {
          skipped++
          if (timer !== undefined) timer = setTimeout(tick, deps.intervalMs).unref()
          return
        }
        skipped = 0
        void this.round(identity).finally(() => {
          identity = true
          if (timer !== undefined) timer = setTimeout(tick, deps.intervalMs).unref()
        })
      }
      timer = setTimeout(tick, 0).unref()
    },
    stop() {
      clearTimeout(timer)
      timer = undefined
    },
  }
}
