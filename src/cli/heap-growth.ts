import { setFlagsFromString } from 'node:v8'

/**
 * How far V8 lets the old generation grow past what the last full collection kept alive, in percent.
 * Left to itself, on a machine with gigabytes of memory V8 grows it by up to 4× when the service
 * allocates briskly (as every request does), so ~80 MB of live objects held ~300 MB of heap under a
 * steady load (bench:soak). 1.5× keeps the heap near its live size for more frequent, short marking
 * (concurrent, off the main thread). Read by V8 at every collection, so it can be set after start.
 */
export const HEAP_GROWING_PERCENT = 50

/** Applied by the long-running commands (serve, dev); node's own `--heap-growing-percent=N` still wins (0: V8's default). */
export function limitHeapGrowth(): void {
  if (process.execArgv.some((flag) => /^--heap[-_]growing[-_]percent/.test(flag))) return
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`)
}
