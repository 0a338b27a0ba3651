/**
 * The deliveries a worker has claimed and not yet recorded: what its leases cover, what bounds the next
 * claim, and what a stop waits for.
 */
export interface HeldDeliveries {
  readonly size: number
  has(id: string): boolean
  add(id: string): void
  /** Recorded (or given up on): no longer held. */
  release(ids: Iterable<string>): void
  ids(): string[]
  /** Resolves once every held delivery is released. */
  settled(): Promise<void>
}

export function createHeldDeliveries(): HeldDeliveries {
  const held = new Set<string>()
  let waiters: (() => void)[] = []
  return {
    get size() {
      return held.size
    },
    has: (id) => held.has(id),
    add: (id) => void held.add(id),
    release(ids) {
      for (const id of ids) held.delete(id)
      if (held.size > 0) return
      for (const resolve of waiters) resolve()
      waiters = []
    },
    ids: () => [...held],
    settled: () => (held.size === 0 ? Promise.resolve() : new Promise((resolve) => void waiters.push(resolve))),
  }
}
