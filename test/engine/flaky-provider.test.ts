// One provider failing 30% of requests (errors, dropped connections, requests hanging past the
// timeout) while blocks keep coming: the follower keeps up (its lag stays bounded) and every
// payment sent meanwhile is judged. The same ratios as 1 block/s with a 2 s timeout, twice as fast
// (four times was tried: its 20-block bound is 5 s of wall time, which a busy 2-core machine's pauses
// alone came close to); `npm run bench:flaky` runs the real-time version for two minutes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { percentile, runFlakyProvider } from '../support/flaky-run.ts'

test('the follower keeps up with a provider failing 30% of requests, and every payment is judged', async () => {
  const result = await runFlakyProvider({
    blocksPerSecond: 2,
    seconds: 40,
    failureShare: 0.3,
    payments: 24,
    rpcTimeoutMs: 1000,
    settleSeconds: 20,
  })
  const failures = result.injected.error + result.injected.hang + result.injected.drop
  assert.ok(failures >= 30, `failures were injected (${JSON.stringify(result.injected)})`)
  assert.ok(result.lags.length >= 40, `the lag was sampled (${result.lags.length} samples)`)
  // Twice as fast as `bench:flaky`, which holds the < 20 blocks target for the maximum: here one
  // stall of the loaded test machine itself (the miner shares the process) may reach it (a CI run on
  // 2026-11-26: p50 4, max 20; alone: p50 3, max 8–10), a follower that does not keep up exceeds both.
  const max = Math.max(...result.lags)
  const shape = `p50 ${percentile(result.lags, 50)}, p95 ${percentile(result.lags, 95)}, max ${max}`
  assert.ok(percentile(result.lags, 95) < 20, `lag stays under 20 blocks (${shape})`)
  assert.ok(max < 30, `no stall reaches 30 blocks (${shape})`)
  assert.deepEqual(result.statuses, { success: 24 })
})
