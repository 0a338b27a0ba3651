import type { Config } from '../config/config.ts'
import { createService } from '../service.ts'

/** A clean-up that hangs must not keep a stopping node alive. */
const SHUTDOWN_TIMEOUT_MS = 20_000

/** Runs until SIGTERM or SIGINT, then shuts down in order: HTTP, background work, database. */
export async function serve(config: Config): Promise<void> {
  // Signals are handled from the start: one arriving while the service starts stops it once started.
  const starting = createService(config)
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    setTimeout(() => {
      console.error(`paywatch: shutdown did not finish within ${SHUTDOWN_TIMEOUT_MS / 1000} s; exiting`)
      process.exit(1)
    }, SHUTDOWN_TIMEOUT_MS).unref()
    const service = await starting.catch(() => undefined)
    service?.common.logger.info({ signal }, 'shutting down')
    await service?.close()
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
  const service = await starting
  if (stopping) return
  await service.listen()
}
