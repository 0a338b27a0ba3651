/**
 * Resolves once the requests just made (RPC reads, callback POSTs) are written to their sockets. On the
 * embedded database a read holds the main thread while it runs, and undici (fetch, and the callbacks'
 * dispatcher) writes a request only two turns of the event loop after it is made (measured on Node 24): a
 * read started at once held the request back by its whole time, and its receiver began only after it.
 */
export function afterRequestsLeave(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)))
}

/** `promise`, or nothing after `ms` (never rejects). */
export function withinMs(promise: Promise<void>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    timer.unref()
    promise.then(
      () => {
        clearTimeout(timer)
        resolve()
      },
      () => {
        clearTimeout(timer)
        resolve()
      },
    )
  })
}
