import { constants } from 'node:os'

/** A clean-up that hangs must not keep a stopping node alive. */
const SHUTDOWN_TIMEOUT_MS = 20_000
/**
 * After a clean shutdown nothing should keep the event loop alive and the process ends by itself.
 * Should something still do so (a leak), it is named on stderr and the process ends anyway: the
 * work is done, and a node that cannot be stopped without SIGKILL is worse than a leaked handle.
 */
const DRAIN_TIMEOUT_MS = 2_000
/**
 * A signal to the process group (Ctrl-C in a terminal, a supervisor) reaches the service twice when a
 * launcher passes it on too (`npm start`, `npx paywatch`, bin/paywatch.js): a repeat this soon is that
 * same stop, not an operator asking again.
 */
const REPEAT_WINDOW_MS = 1_000

/**
 * Stops the process on SIGTERM or SIGINT: the first runs `stop` (an ordered shutdown); another one
 * later than REPEAT_WINDOW_MS exits at once (Ctrl-C pressed again); a stop that fails or takes over
 * SHUTDOWN_TIMEOUT_MS exits with code 1. Returns whether a stop has begun, for a signal arriving during start-up.
 */
export function onStopSignals(stop: (signal: NodeJS.Signals) => Promise<void>): () => boolean {
  let stopping = false
  let firstAt = 0
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) {
      if (performance.now() - firstAt < REPEAT_WINDOW_MS) return
      console.error(`paywatch: ${signal} again; exiting without finishing the shutdown`)
      process.exit(128 + constants.signals[signal])
    }
    stopping = true
    firstAt = performance.now()
    const deadline = setTimeout(() => {
      console.error(`paywatch: shutdown did not finish within ${SHUTDOWN_TIMEOUT_MS / 1000} s; exiting`)
      process.exit(1)
    }, SHUTDOWN_TIMEOUT_MS).unref()
    stop(signal).then(
      () => {
        clearTimeout(deadline)
        // Unref'd: fires only if something else still holds the event loop.
        setTimeout(() => {
          console.error(`paywatch: still open after shutdown: ${process.getActiveResourcesInfo().join(', ')}; exiting`)
          process.exit(0)
        }, DRAIN_TIMEOUT_MS).unref()
      },
      (error: unknown) => {
        console.error(`paywatch: shutdown failed: ${(error as Error).message}`)
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', handle)
  process.on('SIGINT', handle)
  return () => stopping
}
