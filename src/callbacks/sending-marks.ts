import type { Logger } from 'pino'
import type { Db } from '../store/infrastructure/database.ts'
import { markSending } from '../store/deliveries.ts'

/**
 * Writes that an attempt starts, right before its request goes out (`markSending`), for the attempts
 * started in the same moment together: one statement for a burst of attempts, not one each. An
 * attempt whose mark could not be written is sent all the same (delivering matters more than its
 * record; only a crash in that very moment would leave that attempt without one).
 */
export function createSendingMarks(deps: { db: Db; claim: string; logger: Logger }): (id: string, at: Date) => Promise<void> {
  let batch: { ids: string[]; at: Date; written: Promise<void> } | undefined
  return (id, at) => {
    if (!batch) {
      const current: { ids: string[]; at: Date; written: Promise<void> } = { ids: [], at, written: Promise.resolve() }
      // Written once the attempts started in this turn of the event loop are in the batch.
      current.written = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
        batch = undefined
        await markSending(deps.db, deps.claim, current.ids, current.at).catch((error: unknown) =>
          deps.logger.warn(
            { err: error, deliveries: current.ids.length },
            'recording that callback attempts start failed; sending them anyway',
          ),
        )
      })
      batch = current
    }
    batch.ids.push(id)
    return batch.written
  }
}
