// The service as `paywatch serve` assembles it, for bench/api.ts: configured from the environment,
// listening on PORT. Chain followers and callback workers stay off unless BENCH_BACKGROUND=true: the
// benchmark measures the HTTP API and its database work, not the engine's reaction to each create.
import { loadConfig } from '../src/config/config.ts'
import { createService } from '../src/service.ts'

const service = await createService(loadConfig(), { background: process.argv.includes('--background') })
const address = await service.listen()
console.log(JSON.stringify({ listening: address }))
process.on('SIGTERM', () => {
  void service.close().then(() => process.exit(0))
})
