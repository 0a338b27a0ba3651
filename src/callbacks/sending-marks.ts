import type { Logger } from 'pino'
import type { Db } from '../store/infrastructure/database.ts'
import { markSending, unmarkSending, type ClaimedDelivery } from '../store/deliveries.ts'

export interface SendingMarks {
  /**
   * Resolves once `delivery`'s attempt start is written, right before its request goes out; undefined
   * when it was written with the row (a verdict's delivery taken at its commit: `startWritten`) and stands.
   */
  beforeSend(delivery: ClaimedDelivery, at: Date): Promise<void> | undefined
  /** `delivery` is signed and waits for a slot of its endpoint: a start written with its row is taken back. */
  waiting(delivery: ClaimedDelivery): void
}

/**
 * Writes that an attempt starts, right before its request goes out (`markSending`), for the attempts
 * started in the same moment together: one statement for a burst of attempts, not one each. An
 * attempt whose mark could not be written is sent all the same (delivering matters more than its
 * record; only a crash in that very moment would leave that attempt without one).
 *
 * A verdict's delivery handed to the worker at its commit had its start written with its row, as its
 * request goes out at once (delivery-rows.ts): no statement stands between the commit and the request.
 * When it must wait for a slot of its endpoint instead, that start is taken back (`unmarkSending`), so a
 * crash before it goes spends nothing, and it is marked again as it goes, after the take-back is written.
 */
export function createSendingMarks(deps: { db: Db; claim: string; logger: Logger }): SendingMarks {
  const marks = createBatches<Date>(
    (ids, at) => markSending(deps.db, deps.claim, ids, at),
    (error, ids) =>
      deps.logger.warn({ err: error, deliveries: ids.length }, 'recording that callback attempts start failed; sending them anyway'),
  )
  const takeBacks = createBatches<null>(
    (ids) => unmarkSending(deps.db, deps.claim, ids),
    (error, ids) =>
      deps.logger.warn({ err: error, deliveries: ids.length }, 'taking back the start of callbacks waiting for a slot failed'),
  )
  /** Deliveries whose take-back is on its way: their mark follows it. */
  const takenBack = new Map<string, Promise<void>>()
  return {
    beforeSend(delivery, at) {
      if (delivery.startWritten) return undefined
      const before = takenBack.get(delivery.id)
      if (!before) return marks(delivery.id, at)
      takenBack.delete(delivery.id)
      return before.then(() => marks(delivery.id, at))
    },
    waiting(delivery) {
      if (!delivery.startWritten) return
      delivery.startWritten = false
      takenBack.set(delivery.id, takeBacks(delivery.id, null))
    },
  }
}

/**
 * Ids given in one turn of the event loop, written in one statement once it ends (with the first one's `at`);
 * failures logged, not thrown.
 */
function createBatches<At>(
  write: (ids: string[], at: At) => Promise<void>,
  failed: (error: unknown, ids: string[]) => void,
): (id: string, at: At) => Promise<void> {
  let batch: { ids: string[]; at: At; written: Promise<void> } | undefined
  return (id, at) => {
    if (!batch) {
      const current: { ids: string[]; at: At; written: Promise<void> } = { ids: [], at, written: Promise.resolve() }
      current.written = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
        batch = undefined
        await write(current.ids, current.at).catch((error: unknown) => failed(error, current.ids))
      })
      batch = current
    }
    batch.ids.push(id)
    return batch.written
  }
}
