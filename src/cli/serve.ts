import type { Config } from '../config/config.ts'
import { createService } from '../service.ts'

/** Runs until SIGTERM or SIGINT, then shuts down in order: HTTP, background work, database. */
export async function serve(config: Config): Promise<void> {
  const service = await createService(config)
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    service.common.logger.info({ signal }, 'shutting down')
    await service.close()
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
  await service.listen()
}
