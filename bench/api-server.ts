// The service as `paywatch serve` assembles it, for bench/api.ts and bench/soak.ts: configured from the
// environment, listening on PORT. Chain followers and callback workers stay off unless --background:
// bench:api measures the HTTP API and its database work, not the engine's reaction to each create.
import { PerformanceObserver } from 'node:perf_hooks'
import { getHeapSpaceStatistics, getHeapStatistics, writeHeapSnapshot } from 'node:v8'
import { limitHeapGrowth } from '../src/cli/heap-growth.ts'
import { releaseMemoryBeside } from '../src/cli/memory-release.ts'
import { loadConfig } from '../src/config/config.ts'
import { createService } from '../src/service.ts'

limitHeapGrowth()
// As `paywatch serve` runs (BENCH_NO_RELEASE=true compares without it).
const starting = createService(loadConfig(), { background: process.argv.includes('--background') })
const memory = process.env.BENCH_NO_RELEASE === 'true' ? undefined : releaseMemoryBeside(starting)
const service = await starting
const address = await service.listen()
console.log(JSON.stringify({ listening: address }))
process.on('SIGTERM', () => {
  void service.close().then(() => process.exit(0))
})
// Started with an IPC channel (bench:soak): the memory figures only the process itself can read, and
// the time spent in garbage collection (main-thread pauses) since start.
if (process.send) {
  const gc = { count: 0, ms: 0 }
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.count++
      gc.ms += entry.duration
    }
  }).observe({ entryTypes: ['gc'] })
  process.on('message', (message) => {
    // 'gc': the same figures after a full collection (node started with --expose-gc): what is retained.
    if (message === 'gc') (globalThis as { gc?: () => void }).gc?.()
    if (message === 'memory' || message === 'gc')
      process.send!({
        usage: process.memoryUsage(),
        spaces: getHeapSpaceStatistics(),
        heap: getHeapStatistics(),
        gc,
        releases: memory?.releases ?? 0,
      })
    if (typeof message === 'object' && message && 'snapshot' in message)
      process.send!({ written: writeHeapSnapshot(String(message.snapshot)) })
  })
}
