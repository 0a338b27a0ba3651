import type { Config } from '../config/config.ts'
import { createService } from '../service.ts'
import { limitHeapGrowth } from './heap-growth.ts'
import { releaseMemoryBeside } from './memory-release.ts'
import { onStopSignals } from './stop-signals.ts'
import { stopWhenOrphaned } from './orphan-watch.ts'

/** Runs until SIGTERM or SIGINT, then shuts down in order: HTTP, background work, database. */
export async function serve(config: Config): Promise<void> {
  limitHeapGrowth()
  // Signals are handled from the start: one arriving while the service starts stops it once started.
  const starting = createService(config)
  const memory = releaseMemoryBeside(starting)
  const stopping = onStopSignals(async (signal) => {
    const service = await starting.catch(() => undefined)
    service?.common.logger.info({ signal }, 'shutting down')
    memory.stop()
    await service?.close()
    service?.common.logger.info('stopped')
  })
  stopWhenOrphaned()
  const service = await starting
  if (stopping()) return
  await service.listen()
}
