import { createHash } from 'node:crypto'
import pg from 'pg'
import type { Logger } from 'pino'

/**
 * Leadership of one chain among the nodes sharing a database: exactly one node follows a chain.
 * `acquire` resolves once this node leads (or `signal` aborts); `lost` aborts when the lead is lost
 * (its connection died), so the follower stops before another node takes over.
 */
export interface LeaderLock {
  acquire(signal: AbortSignal): Promise<{ lost: AbortSignal } | undefined>
  release(): Promise<void>
}

/** On the embedded database there is one process: it always leads. */
export function singleProcessLock(): LeaderLock {
  let controller: AbortController | undefined
  return {
    async acquire(signal) {
      if (signal.aborted) return undefined
      controller = new AbortController()
      return { lost: controller.signal }
    },
    async release() {
      controller?.abort()
    },
  }
}

/** A stable 64-bit advisory lock key per chain name (same on every node). */
export function chainLockKey(chain: string): bigint {
  return createHash('sha256').update(`paywatch:chain-follower:${chain}`).digest().readBigInt64BE(0)
}

export interface AdvisoryLockOptions {
  /** How often a waiting node tries to take the lock: the takeover delay after a leader dies. */
  retryMs?: number
  /** How often the leader checks that its lock connection is alive. */
  heartbeatMs?: number
  logger?: Logger
}

/**
 * A PostgreSQL session advisory lock held on a dedicated connection (never a pooled one: the lock
 * lives as long as the session). When the leader's process dies, PostgreSQL drops its session and
 * the lock with it; a waiting node's next try (every `retryMs`) takes over. The leader checks its
 * connection every `heartbeatMs` so that a silently broken connection also ends its lead.
 */
export function postgresAdvisoryLock(databaseUrl: string, chain: string, options: AdvisoryLockOptions = {}): LeaderLock {
  const retryMs = options.retryMs ?? 2_000
  const heartbeatMs = options.heartbeatMs ?? 5_000
  const key = chainLockKey(chain).toString()
  let client: pg.Client | undefined
  let heartbeat: NodeJS.Timeout | undefined
  let lostController: AbortController | undefined

  const drop = async () => {
    clearInterval(heartbeat)
    heartbeat = undefined
    const held = client
    client = undefined
    lostController?.abort()
    if (held) await held.end().catch(() => {})
  }

  const tryOnce = async (): Promise<boolean> => {
    const candidate = new pg.Client({ connectionString: databaseUrl, keepAlive: true, application_name: `paywatch-follower-${chain}` })
    // Only the connection holding the lock ends the lead when it fails.
    candidate.on('error', () => {
      if (client === candidate) void drop()
    })
    try {
      await candidate.connect()
      const result = await candidate.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS locked', [key])
      if (result.rows[0]?.locked) {
        client = candidate
        return true
      }
    } catch (error) {
      options.logger?.warn({ err: error, chain }, 'could not try the chain follower lock')
    }
    await candidate.end().catch(() => {})
    return false
  }

  return {
    async acquire(signal) {
      while (!signal.aborted) {
        if (await tryOnce()) {
          if (signal.aborted) {
            await drop()
            return undefined
          }
          lostController = new AbortController()
          const held = client!
          held.on('end', () => {
            if (client === held) void drop()
          })
          heartbeat = setInterval(() => {
            const lose = () => {
              if (client === held) void drop()
            }
            // A connection that stopped answering is as good as lost: PostgreSQL will free the lock.
            const silent = setTimeout(lose, heartbeatMs * 2)
            held.query('SELECT 1').then(() => clearTimeout(silent), () => {
              clearTimeout(silent)
              lose()
            })
          }, heartbeatMs)
          heartbeat.unref()
          return { lost: lostController.signal }
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, retryMs)
          signal.addEventListener('abort', () => {
            clearTimeout(timer)
            resolve()
          }, { once: true })
        })
      }
      return undefined
    },
    release: drop,
  }
}
