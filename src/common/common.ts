import type { Logger } from 'pino'
import type { Config } from '../config/config.ts'
import type { Clock } from './clock.ts'
import type { Metrics } from './metrics.ts'
import type { Shutdown } from './shutdown.ts'

/** What every subsystem factory receives (Ponder's `common`). */
export interface Common {
  config: Config
  logger: Logger
  metrics: Metrics
  clock: Clock
  shutdown: Shutdown
}
