// The follower behind one provider failing 30% of requests (HTTP 500/429, JSON-RPC -32603, dropped
// connections, requests hanging past the 2 s timeout) while Anvil mines one block per second for
// two minutes and real payments are sent, their trackings created beforehand. Prints the lag
// (blocks mined but not processed, sampled after each block) and how the payments were judged.
//   npm run bench:flaky [-- --seconds 120 --rate 1 --failures 0.3 --payments 40 --timeout-ms 2000]
import { parseArgs } from 'node:util'
import { percentile, runFlakyProvider } from '../test/support/flaky-run.ts'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '120' },
    rate: { type: 'string', default: '1' },
    failures: { type: 'string', default: '0.3' },
    payments: { type: 'string', default: '40' },
    'timeout-ms': { type: 'string', default: '2000' },
  },
})
const options = {
  seconds: Number(values.seconds),
  blocksPerSecond: Number(values.rate),
  failureShare: Number(values.failures),
  payments: Number(values.payments),
  rpcTimeoutMs: Number(values['timeout-ms']),
  settleSeconds: 60,
}
console.log(
  `flaky provider: ${options.failureShare * 100}% failed requests, ${options.blocksPerSecond} block/s for ${options.seconds} s, ` +
    `${options.payments} payments, ${options.rpcTimeoutMs} ms timeout`,
)
const started = Date.now()
const result = await runFlakyProvider(options)
const { lags } = result
console.log(`blocks mined: ${result.blocksMined}; lag samples: ${lags.length}`)
console.log(`lag (blocks): p50 ${percentile(lags, 50)}, p95 ${percentile(lags, 95)}, max ${Math.max(...lags)}`)
console.log(`payments judged: ${JSON.stringify(result.statuses)}`)
console.log(`failures injected: ${JSON.stringify(result.injected)}; requests sent: ${JSON.stringify(result.requests)}`)
console.log(`wall time: ${Math.round((Date.now() - started) / 1000)} s`)
