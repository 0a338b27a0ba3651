import pg from 'pg'
import type { Logger } from 'pino'
import { backoffPolicies, delayFor } from '../../common/backoff.ts'

export interface PgListenerOptions {
  url: string
  channel: string
  logger: Logger
  onNotification(payload: string): void
  /** Called after a lost connection was re-established: notifications of the gap are gone. */
  onReconnect?(): void
  /** How long to wait before the n-th reconnect attempt (n = 0, 1, …). */
  retryDelayMs?(attempt: number): number
  /** Period of the liveness query that detects a silently dead connection. */
  healthCheckMs?: number
  /** How the connection shows in `pg_stat_activity` (default `paywatch-listen`). */
  applicationName?: string
}

export interface PgListener {
  /** Connects and LISTENs; when the database is unreachable it keeps retrying in the background. */
  start(): Promise<void>
  stop(): Promise<void>
}

export const LISTENER_APPLICATION_NAME = 'paywatch-listen'

/** The n-th reconnect attempt (n = 0, 1, …) is the (n + 1)-th failure in a row of the shared policy. */
const defaultRetryDelay = (attempt: number): number => delayFor(backoffPolicies.listenReconnect, attempt + 1)

/**
 * LISTEN on a dedicated PostgreSQL connection (a pooled one would be handed to other queries),
 * reconnecting with backoff whenever it errors, ends or stops answering.
 */
export function createPgListener(options: PgListenerOptions): PgListener {
  const retryDelay = options.retryDelayMs ?? defaultRetryDelay
  let client: pg.Client | undefined
  let stopped = false
  let connectedOnce = false
  let attempt = 0
  let retryTimer: NodeJS.Timeout | undefined
  let healthTimer: NodeJS.Timeout | undefined

  const discard = (c: pg.Client) => {
    c.removeAllListeners()
    c.on('error', () => {})
    void c.end().catch(() => {})
  }

  const lost = (c: pg.Client, error?: unknown) => {
    if (client !== c) return
    client = undefined
    discard(c)
    if (stopped) return
    options.logger.warn({ err: error, channel: options.channel }, 'LISTEN connection lost; reconnecting')
    scheduleReconnect()
  }

  const scheduleReconnect = () => {
    const delay = retryDelay(attempt++)
    retryTimer = setTimeout(() => {
      retryTimer = undefined
      connect().catch((error: unknown) => {
        if (stopped) return
        options.logger.warn({ err: error, channel: options.channel, attempt }, 'LISTEN connection failed; retrying')
        scheduleReconnect()
      })
    }, delay)
  }

  const connect = async () => {
    const c = new pg.Client({
      connectionString: options.url,
      application_name: options.applicationName ?? LISTENER_APPLICATION_NAME,
      keepAlive: true,
    })
    c.on('error', (error) => lost(c, error))
    c.on('end', () => lost(c))
    c.on('notification', (message) => {
      if (message.channel !== options.channel || message.payload === undefined) return
      try {
        options.onNotification(message.payload)
      } catch (error) {
        options.logger.error({ err: error }, 'LISTEN notification handler failed')
      }
    })
    try {
      await c.connect()
      await c.query(`LISTEN ${c.escapeIdentifier(options.channel)}`)
    } catch (error) {
      discard(c)
      throw error
    }
    if (stopped) return discard(c)
    client = c
    attempt = 0
    if (connectedOnce) {
      options.logger.info({ channel: options.channel }, 'LISTEN connection re-established')
      options.onReconnect?.()
    }
    connectedOnce = true
  }

  return {
    async start() {
      healthTimer = setInterval(() => {
        const c = client
        c?.query('SELECT 1').catch((error: unknown) => lost(c, error))
      }, options.healthCheckMs ?? 30_000)
      healthTimer.unref()
      try {
        await connect()
      } catch (error) {
        options.logger.warn({ err: error, channel: options.channel }, 'LISTEN connection failed; retrying in the background')
        scheduleReconnect()
      }
    },
    async stop() {
      stopped = true
      clearTimeout(retryTimer)
      clearInterval(healthTimer)
      const c = client
      client = undefined
      if (c) {
        c.removeAllListeners()
        c.on('error', () => {})
        await c.end().catch(() => {})
      }
    },
  }
}
