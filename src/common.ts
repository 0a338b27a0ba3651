import pino, { type Logger } from 'pino'
import { Registry, collectDefaultMetrics } from 'prom-client'
import type { Config } from './config/config.ts'

/** Wall clock, injectable so that time-dependent behaviour is tested without sleeping. */
export type Clock = () => Date
export const systemClock: Clock = () => new Date()

/** Ordered clean-up on SIGTERM: hooks run last-registered first. */
export interface Shutdown {
  add(name: string, hook: () => Promise<void> | void): void
  run(): Promise<void>
  readonly signal: AbortSignal
}

export function createShutdown(logger?: Logger): Shutdown {
  const hooks: { name: string; hook: () => Promise<void> | void }[] = []
  const controller = new AbortController()
  let running: Promise<void> | undefined
  return {
    add: (name, hook) => void hooks.push({ name, hook }),
    signal: controller.signal,
    run() {
      running ??= (async () => {
        controller.abort()
        for (const { name, hook } of hooks.reverse()) {
          try {
            await hook()
          } catch (error) {
            logger?.error({ err: error, hook: name }, 'shutdown hook failed')
          }
        }
      })()
      return running
    },
  }
}

export interface Metrics {
  registry: Registry
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry()
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry })
  return { registry }
}

/** Secrets that must never reach a log line in clear. */
const redactPaths = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'headers["x-api-key"]',
  'headers.authorization',
  'key',
  'access_token',
  'secret_id',
  'uuid',
  'callback',
]

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: redactPaths, censor: '[redacted]' } }, destination)
}

/** What every subsystem factory receives (Ponder's `common`). */
export interface Common {
  config: Config
  logger: Logger
  metrics: Metrics
  clock: Clock
  shutdown: Shutdown
}
