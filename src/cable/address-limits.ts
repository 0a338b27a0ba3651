import { rateLimited, type HttpProblem } from '../http/problem.ts'

import { clientAddress } from '../common/client-address.ts'

export { clientAddress }

export interface AddressLimitsConfig {
  /** Open widget sockets one client address may hold on this node. */
  maxConnectionsPerAddress: number
  /** Connections one address may open at once before the refill rate applies. */
  connectBurst: number
  /** Connections per second the address's bucket refills. */
  connectsPerSecond: number
}

export type AddressRefusal = 'address_connections' | 'connection_rate'

/**
 * The per-client limits of `/cable`, so that one client cannot take the node's sockets from everyone
 * else: open sockets per address, and a token bucket of new connections per address. Counted on this
 * node only, as the sockets are. An IPv6 client is counted by its /64, which one subscriber commonly
 * holds whole.
 */
export function createAddressLimits(config: AddressLimitsConfig, now: () => number) {
  const open = new Map<string, number>()
  const buckets = new Map<string, { tokens: number; at: number }>()

  const tokensOf = (address: string, at: number): number => {
    const bucket = buckets.get(address)
    if (!bucket) return config.connectBurst
    return Math.min(config.connectBurst, bucket.tokens + ((at - bucket.at) / 1000) * config.connectsPerSecond)
  }

  return {
    /**
     * Admits a connection from `ip` (counting it until `onClose` fires), or answers why not: the
     * problem to send and the reason to count.
     */
    admit(ip: string, onClose: (release: () => void) => void): { reason: AddressRefusal; problem: HttpProblem } | undefined {
      const address = clientAddress(ip)
      const count = open.get(address) ?? 0
      if (count >= config.maxConnectionsPerAddress) {
        const limit = config.maxConnectionsPerAddress
        return {
          reason: 'address_connections',
          problem: rateLimited(
            `your address holds its limit of ${limit} open widget connections on this node; close one or retry shortly`,
            {
              'retry-after': '5',
              'ratelimit-limit': String(limit),
              'ratelimit-remaining': '0',
              'ratelimit-reset': '5',
            },
          ),
        }
      }
      const at = now()
      const tokens = tokensOf(address, at)
      if (tokens < 1) {
        const retry = Math.max(1, Math.ceil((1 - tokens) / config.connectsPerSecond))
        return {
          reason: 'connection_rate',
          problem: rateLimited(
            `over the limit of ${config.connectBurst} widget connections at once, ${config.connectsPerSecond} more per second, from your address; retry in ${retry} s`,
            {
              'retry-after': String(retry),
              'ratelimit-limit': String(config.connectBurst),
              'ratelimit-remaining': '0',
              'ratelimit-reset': String(retry),
            },
          ),
        }
      }
      buckets.set(address, { tokens: tokens - 1, at })
      open.set(address, count + 1)
      let released = false
      onClose(() => {
        if (released) return
        released = true
        const left = (open.get(address) ?? 1) - 1
        if (left <= 0) open.delete(address)
        else open.set(address, left)
      })
      return undefined
    },
    /** Forgets the buckets that have refilled, so that addresses seen once do not stay in memory. */
    sweep(): void {
      const at = now()
      for (const address of buckets.keys()) {
        if (tokensOf(address, at) >= config.connectBurst) buckets.delete(address)
      }
    },
  }
}
