/**
 * Lets the claim loop sleep until the poll interval ends or something makes a delivery due sooner (a
 * completion, a redelivery, room freed for a backlog). A wake while the loop is busy is kept, so the
 * next sleep returns at once instead of waiting out a poll for work that is already there.
 */
export interface WakeSignal {
  wake(): void
  sleep(ms: number): Promise<void>
}

export function createWakeSignal(): WakeSignal {
  let wakeUp: (() => void) | undefined
  let woken = false
  return {
    wake() {
      woken = true
      wakeUp?.()
    },
    sleep(ms) {
      if (woken) {
        woken = false
        return Promise.resolve()
      }
      return new Promise((resolve) => {
        const timer = setTimeout(done, ms)
        function done() {
          clearTimeout(timer)
          wakeUp = undefined
          woken = false
          resolve()
        }
        wakeUp = done
      })
    },
  }
}
