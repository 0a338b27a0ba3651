import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { ReferenceCheck } from '../domain/reference-check.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { Logger } from 'pino'
import type { ChainReadiness } from './readiness.ts'
import type { Shutdown } from './shutdown.ts'

/** Adds headers to a record response (the callback signature); given the exact body bytes. */
export type DecorateRecord = (tracking: Tracking, body: string, reply: FastifyReply) => Promise<void>

/**
 * What one part of Paywatch (account data, chain data, release, callbacks, the widget channel, the
 * chain engine) contributes to the service, in one shape: the service composes a list of these. Every
 * field is optional; a subsystem states only what it has.
 *
 * Resources a subsystem holds from its construction (a connection pool, event listeners) it hands to
 * `common.shutdown` itself. `start` is its background work: run in list order once the HTTP API is
 * ready, and only when the service runs background work; `stop` undoes `start` and runs, in reverse
 * order of the starts, on shutdown.
 */
export interface Subsystem {
  /** In logs (start, shutdown hooks). */
  readonly name: string
  /** Routes behind API key authentication and the rate limits. */
  readonly apiRoutes?: readonly FastifyPluginAsync[]
  /** Routes of the admin API, registered inside its one scope (src/http/admin-scope.ts: the admin-token guard). */
  readonly adminRoutes?: readonly FastifyPluginAsync[]
  /** Routes outside API key authentication and the admin API (the public key, the WebSocket). */
  readonly publicRoutes?: readonly FastifyPluginAsync[]
  /** Create-time checks of what a new tracking refers to (integration, callback host, link, shop). */
  readonly referenceChecks?: readonly ReferenceCheck[]
  /** Headers of a record response; decorators run in list order and only set headers. */
  readonly decorateRecord?: DecorateRecord
  start?(): Promise<void>
  stop?(): Promise<void>
  /** The chains this subsystem follows, as /readyz reports them. */
  readiness?(): Promise<ChainReadiness[]>
}

/**
 * Starts the subsystems' background work in list order. Each one's `stop` goes to `shutdown` as soon as
 * it has started, so they stop in reverse order, and a start that fails leaves the ones before it to
 * be stopped by the shutdown that follows.
 */
export async function startSubsystems(subsystems: readonly Subsystem[], shutdown: Shutdown, logger: Logger): Promise<void> {
  for (const subsystem of subsystems) {
    if (!subsystem.start) continue
    await subsystem.start()
    if (subsystem.stop) shutdown.add(subsystem.name, () => subsystem.stop!())
    logger.debug({ task: subsystem.name }, 'background task started')
  }
}

/** The record decorators of the subsystems as one, in list order; undefined when none has one. */
export function decorateRecordOf(subsystems: readonly Subsystem[]): DecorateRecord | undefined {
  const decorators = subsystems.flatMap((subsystem) => (subsystem.decorateRecord ? [subsystem.decorateRecord] : []))
  if (decorators.length <= 1) return decorators[0]
  return async (tracking, body, reply) => {
    for (const decorate of decorators) await decorate(tracking, body, reply)
  }
}

/** Every chain the subsystems follow, as /readyz reports them. */
export async function readinessOf(subsystems: readonly Subsystem[]): Promise<ChainReadiness[]> {
  const reports = await Promise.all(subsystems.map((subsystem) => subsystem.readiness?.() ?? []))
  return reports.flat()
}
