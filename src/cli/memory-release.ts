import { performance } from 'node:perf_hooks'
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/**
 * V8 keeps the heap a burst of requests grew (old generation and 16 MB semi-spaces) committed after the
 * burst: ~60 MB of RSS on the embedded database after 20 s of creates, still there while the service
 * goes on following blocks (docs/performance.md, "Memory after a burst"). Once the event loop is quiet
 * again (at most 80% busy over 5 s, twice in a row: a burst keeps it busy all the time) and the old
 * generation holds 16 MB more than at rest, one full collection that shrinks the heap (V8's "last resort"
 * flavour: compacting, new space shrunk) gives it back; at most once in 30 s, so a steady load does not pay
 * for it (a pause of tens of ms) more often. The young generation is not counted: following blocks regrows
 * it by ~16 MB within half a minute of every release, and V8 sizes it by itself (a release each time cost
 * ~10% of the service's CPU, docs/performance.md, "Fourteenth pass").
 */
export interface MemoryReleaseOptions {
  intervalMs?: number
  /** Old generation committed beyond its size at rest that is worth a collection, in bytes. */
  slackBytes?: number
  /** The event loop's busy share over an interval below which the service counts as quiet. */
  quiet?: number
  /** At most one release per this many ms: under a steady load the heap regrows, and a release each time would cost more than it gives. */
  minSpacingMs?: number
  /**
   * Resolves at the chain engine's next quiet moment (right after a block, `ChainEngine.quietMoment`), after
   * `maxWaitMs` at most: a release waits for it, so that its pause does not land on a block's way to its
   * callbacks. Absent: at once.
   */
  quietMoment?: (maxWaitMs: number) => Promise<void>
}

/** A due release waits at most this long for a quiet moment (the interval between two looks). */
const QUIET_WAIT_MS = 5_000

export interface MemoryRelease {
  /** Collections run so far (the benchmarks print it). */
  readonly releases: number
  /** One look at the loop and the heap (run by the interval; tests call it directly). */
  tick(): void
  stop(): void
}

type GcFunction = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void

export interface MemoryReleaseProbes {
  /** The event loop's busy share since the previous call. */
  loopBusy: () => number
  /** The heap committed to V8's old generation (and every space but the young generation's). */
  oldGeneration: () => number
  gc: GcFunction
  now: () => number
}

/** Starts watching; `paywatch serve` calls it once. */
export function releaseMemoryAfterBursts(options: MemoryReleaseOptions = {}): MemoryRelease {
  let lastLoop = performance.eventLoopUtilization()
  const release = createMemoryRelease(options, {
    loopBusy: () => {
      const loop = performance.eventLoopUtilization()
      const busy = performance.eventLoopUtilization(loop, lastLoop).utilization
      lastLoop = loop
      return busy
    },
    oldGeneration: oldGenerationCommitted,
    gc: exposedGc(),
    now: () => performance.now(),
  })
  const timer = setInterval(release.tick, options.intervalMs ?? 5_000)
  timer.unref()
  return {
    ...release,
    get releases() {
      return release.releases
    },
    stop: () => clearInterval(timer),
  }
}

/**
 * The release as `paywatch serve` runs it beside the service `starting` (the benchmarks' server too): a due
 * release waits for the chain engine's quiet moment once the service is up, and for nothing before.
 */
export function releaseMemoryBeside(starting: Promise<{ engine: { quietMoment(maxWaitMs: number): Promise<void> } }>): MemoryRelease {
  let started: Awaited<typeof starting> | undefined
  starting.then((service) => (started = service)).catch(() => {}) // a failed start is its caller's to report
  return releaseMemoryAfterBursts({ quietMoment: (maxWaitMs) => started?.engine.quietMoment(maxWaitMs) ?? Promise.resolve() })
}

/** The decision, on given probes: collect when the loop is quiet and the heap is well above its rest. */
export function createMemoryRelease(options: MemoryReleaseOptions, probes: MemoryReleaseProbes): MemoryRelease {
  const slackBytes = options.slackBytes ?? 16 * 2 ** 20
  // A burst on the embedded database keeps the loop busy all the time (PostgreSQL runs on it); after it
  // the fast path's checks of the burst's trackings wait mostly on RPC answers for a while, and a host
  // loaded by other processes reads busy high (time descheduled counts as busy): 80% is quiet enough.
  const quiet = options.quiet ?? 0.8
  const minSpacingMs = options.minSpacingMs ?? 30_000
  let releases = 0
  let lastRelease = Number.NEGATIVE_INFINITY
  // The old generation at rest: the smallest seen committed, or what the last release left.
  let rest = Number.POSITIVE_INFINITY
  /** A release is due and waits for the chain engine's quiet moment. */
  let waiting = false
  /**
   * Ticks in a row that found the loop quiet and the slack held. A release takes two: a burst that began
   * late in a tick's 5 s reads quiet while it has already grown the heap, and a release then would come
   * at its start and hold back the one after it by the spacing.
   */
  let dueTicks = 0
  const collect = () => {
    probes.gc({ type: 'major', execution: 'sync', flavor: 'last-resort' })
    releases++
    lastRelease = probes.now()
    rest = probes.oldGeneration()
    dueTicks = 0
  }
  return {
    get releases() {
      return releases
    },
    tick() {
      const busy = probes.loopBusy()
      const held = probes.oldGeneration()
      rest = Math.min(rest, held)
      dueTicks = busy <= quiet && held - rest >= slackBytes ? dueTicks + 1 : 0
      if (waiting || dueTicks < 2 || probes.now() - lastRelease < minSpacingMs) return
      if (!options.quietMoment) return collect()
      waiting = true
      void options
        .quietMoment(QUIET_WAIT_MS)
        .catch(() => {})
        .then(() => {
          waiting = false
          collect()
        })
    },
    stop() {},
  }
}

/** V8's gc() without --expose-gc on the command line: the flag set at run time, the function taken from a new context. */
function exposedGc(): GcFunction {
  const existing = (globalThis as { gc?: GcFunction }).gc
  if (existing) return existing
  setFlagsFromString('--expose-gc')
  return runInNewContext('gc') as GcFunction
}

/** The young generation's spaces, which V8 grows and shrinks by itself as the allocation rate moves. */
const YOUNG_SPACES = new Set(['new_space', 'new_large_object_space'])

/** The heap committed to every space but the young generation's, in bytes. */
function oldGenerationCommitted(): number {
  let bytes = 0
  for (const space of getHeapSpaceStatistics()) if (!YOUNG_SPACES.has(space.space_name)) bytes += space.space_size
  return bytes
}
