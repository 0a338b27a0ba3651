import type { Clock } from '../common/clock.ts'
import type { ChainReadiness } from '../common/readiness.ts'
import type { ChainContext } from './chain-context.ts'
import { withProviders } from './chain-health.ts'

/**
 * Readiness of every tracked chain: from its follower while this node follows it (ready while the
 * last sync succeeded; an idle chain with no new blocks is not unhealthy), else from an RPC probe
 * (another node leads it, or it has not synced yet).
 */
export async function chainsReadiness(
  contexts: Iterable<ChainContext>,
  fallbackReadiness: () => Promise<ChainReadiness[]>,
  clock: Clock,
): Promise<ChainReadiness[]> {
  const all = [...contexts]
  const probed = new Map<string, ChainReadiness>()
  const needProbe = all.some((c) => !c.runner.follower?.state.head)
  if (needProbe) for (const entry of await fallbackReadiness()) probed.set(entry.name, entry)
  const nowSeconds = clock().getTime() / 1000
  return all.map(({ handle, runner }): ChainReadiness => {
    const name = handle.config.name
    if (runner.status === 'disabled') return withProviders(handle, { name, ok: false, error: 'the RPC serves another network' })
    const state = runner.follower?.state
    if (!state?.head) return withProviders(handle, probed.get(name) ?? { name, ok: false, error: 'not probed' })
    return withProviders(handle, {
      name,
      ok: state.lastError === undefined,
      head: state.head.number.toString(),
      headAgeSeconds: Math.max(0, Math.round(nowSeconds - Number(state.head.timestamp))),
      ...(state.lastError ? { error: state.lastError } : {}),
    })
  })
}
