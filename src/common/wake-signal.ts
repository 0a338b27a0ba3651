/**
 * "Sleep until woken", written once: a loop sleeps until its interval ends, something tells it there is
 * work now (`wake()`), or its abort signal fires. A wake while the loop is busy is kept, so the next sleep
 * returns at once instead of waiting out an interval for work that is already there. Used by the callback
 * worker's claim loop, the chain follower's head signal and the chain lease's retry.
 */
export interface WakeSignal {
  wake(): void
  /** Resolves after `ms`, on a wake (also one that came before), or when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>
}

export function createWakeSignal(): WakeSignal {
  let wakeUp: (() => void) | undefined
  let woken = false
  return {
    wake() {
      woken = true
      wakeUp?.()
    },
    sleep(ms, signal) {
      if (woken || signal?.aborted) {
        woken = false
        return Promise.resolve()
      }
      return new Promise((resolve) => {
        const timer = setTimeout(done, ms)
        function done() {
          clearTimeout(timer)
          signal?.removeEventListener('abort', done)
          wakeUp = undefined
          woken = false
          resolve()
        }
        wakeUp = done
        signal?.addEventListener('abort', done, { once: true })
      })
    },
  }
}
