import { hostname } from 'node:os'
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { openDedicatedConnection, type DatabaseHandle, type Db } from '../store/infrastructure/database.ts'
import { createPgListener, type PgListener } from '../store/infrastructure/pg-listener.ts'
import { chainLease, type LeaderLock } from './leader-lock.ts'

const LEASE_CHANNEL = 'paywatch_chain_lease'

export interface LeaseChannelOptions {
  /** How often a standby node tries to take a chain's lead (PostgreSQL). */
  lockRetryMs?: number
  /** How long a chain's lease lasts without renewal, and how often its leader renews it. */
  leaseTtlMs?: number
  leaseRenewMs?: number
}

export interface LeaseChannel {
  /** The lease of `chain` for this node. */
  lockFor(chain: string): LeaderLock
  start(): Promise<void>
  stop(): Promise<void>
}

/**
 * The chains' leases of this node. On PostgreSQL they live on a connection of their own, whose
 * backend marks this node alive, and a release is announced on a channel so that a standby node
 * takes over at once (`wake(chain)` is told); on the embedded database this process is alone.
 */
export function createLeaseChannel(
  database: DatabaseHandle,
  logger: Logger,
  wake: (chain: string | undefined) => void,
  options: LeaseChannelOptions = {},
): LeaseChannel {
  const postgresUrl = database.kind === 'postgres' ? database.url : null
  const leaseDb: Db = postgresUrl ? openDedicatedConnection(postgresUrl, 'paywatch-lease') : database.db
  const holder = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`
  const listener: PgListener | undefined = postgresUrl
    ? createPgListener({
        url: postgresUrl,
        channel: LEASE_CHANNEL,
        logger,
        applicationName: 'paywatch-lease-listen',
        onNotification: (chain) => wake(chain),
        // Releases announced while the connection was down are gone: try every chain now.
        onReconnect: () => wake(undefined),
      })
    : undefined
  return {
    lockFor: (chain) =>
      chainLease({
        db: leaseDb,
        chain,
        holder,
        exclusive: !postgresUrl,
        logger,
        ttlMs: options.leaseTtlMs,
        renewMs: options.leaseRenewMs,
        retryMs: options.lockRetryMs,
        notifyChannel: postgresUrl ? LEASE_CHANNEL : undefined,
      }),
    async start() {
      await listener?.start()
    },
    async stop() {
      await listener?.stop()
      if (leaseDb !== database.db) await leaseDb.destroy()
    },
  }
}
