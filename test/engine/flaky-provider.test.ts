// One provider failing 30% of requests (errors, dropped connections, requests hanging past the
// timeout) while blocks keep coming: the follower keeps up (its lag stays bounded) and every
// payment sent meanwhile is judged. The same ratios as 1 block/s with a 2 s timeout, four times
// faster; `npm run bench:flaky` runs the real-time version.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { percentile, runFlakyProvider } from '../support/flaky-run.ts'

test('the follower keeps up with a provider failing 30% of requests, and every payment is judged', async () => {
  const result = await runFlakyProvider({
    blocksPerSecond: 4, seconds: 30, failureShare: 0.3, payments: 24, rpcTimeoutMs: 500, settleSeconds: 20,
  })
  const failures = result.injected.error + result.injected.hang + result.injected.drop
  assert.ok(failures >= 30, `failures were injected (${JSON.stringify(result.injected)})`)
  assert.ok(result.lags.length >= 60, `the lag was sampled (${result.lags.length} samples)`)
  const max = Math.max(...result.lags)
  assert.ok(max < 20, `lag stays under 20 blocks (p50 ${percentile(result.lags, 50)}, max ${max})`)
  assert.deepEqual(result.statuses, { success: 24 })
})
