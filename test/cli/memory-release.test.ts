// Memory after a burst (src/cli/memory-release.ts): one shrinking collection once the loop is quiet and
// the old generation is well above its rest, never during a burst, not again until it grows anew.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createMemoryRelease, releaseMemoryAfterBursts } from '../../src/cli/memory-release.ts'

const MB = 2 ** 20

function probes(samples: { busy: number; heap: number }[]) {
  let i = 0
  const collected: number[] = []
  let heap = samples[0]!.heap
  return {
    collected,
    probes: {
      loopBusy: () => {
        const sample = samples[Math.min(i, samples.length - 1)]!
        heap = sample.heap
        i++
        return sample.busy
      },
      oldGeneration: () => heap,
      gc: () => {
        collected.push(i)
        heap = 60 * MB
      },
      // One tick a minute: the spacing between releases never holds these back.
      now: () => i * 60_000,
    },
  }
}

test('collects once after a burst, when the loop is quiet again and the heap grew by the slack', () => {
  const { collected, probes: p } = probes([
    { busy: 0.1, heap: 60 * MB }, // at rest
    { busy: 0.95, heap: 90 * MB }, // the burst: busy, never collected
    { busy: 0.98, heap: 120 * MB },
    { busy: 0.1, heap: 120 * MB }, // quiet again: one tick
    { busy: 0.1, heap: 120 * MB }, // and a second: collected (heap back to 60)
    { busy: 0.1, heap: 62 * MB }, // at rest: nothing
    { busy: 0.1, heap: 70 * MB }, // grown less than the slack: nothing
  ])
  const release = createMemoryRelease({ slackBytes: 24 * MB, quiet: 0.25, minSpacingMs: 60_000 }, p)
  for (let k = 0; k < 7; k++) release.tick()
  assert.deepEqual(collected, [5])
  assert.equal(release.releases, 1)
})

test('the rest after a release is what the release left: a heap that stays larger is not collected again and again', () => {
  const { collected, probes: p } = probes([
    { busy: 0.1, heap: 40 * MB },
    { busy: 0.1, heap: 100 * MB },
    { busy: 0.1, heap: 100 * MB }, // collected, leaves 60
    { busy: 0.1, heap: 75 * MB }, // 15 above what the release left: nothing
    { busy: 0.1, heap: 75 * MB },
  ])
  const release = createMemoryRelease({ slackBytes: 24 * MB, minSpacingMs: 60_000 }, p)
  for (let k = 0; k < 5; k++) release.tick()
  assert.deepEqual(collected, [3])
})

test('under a steady load that regrows the heap, at most one release per spacing', () => {
  let clock = 0
  let heap = 60 * MB
  const collected: number[] = []
  const release = createMemoryRelease(
    { slackBytes: 16 * MB, quiet: 0.5, minSpacingMs: 60_000 },
    {
      loopBusy: () => 0.4,
      oldGeneration: () => heap,
      gc: () => {
        collected.push(clock)
        heap = 60 * MB
      },
      now: () => clock,
    },
  )
  // A tick every 5 s for two minutes; the heap regrows by 20 MB between ticks.
  for (clock = 0; clock <= 120_000; clock += 5_000) {
    release.tick()
    heap += 20 * MB
  }
  assert.deepEqual(collected, [10_000, 70_000])
})

test('a burst that begins late in a quiet tick is not collected at its start, but once it is over', () => {
  const { collected, probes: p } = probes([
    { busy: 0.1, heap: 60 * MB }, // at rest
    { busy: 0.1, heap: 60 * MB },
    { busy: 0.5, heap: 90 * MB }, // the burst began 2 s before this tick: quiet enough, the heap grown already
    { busy: 0.97, heap: 120 * MB }, // the burst
    { busy: 0.1, heap: 120 * MB }, // over
    { busy: 0.1, heap: 120 * MB }, // collected
  ])
  const release = createMemoryRelease({ slackBytes: 16 * MB, minSpacingMs: 60_000 }, p)
  for (let k = 0; k < 6; k++) release.tick()
  assert.deepEqual(collected, [6], 'not at the burst’s start (which would hold back the release after it)')
})

test('a due release waits for the chain engine’s quiet moment, and is asked for once meanwhile', async () => {
  const { collected, probes: p } = probes([
    { busy: 0.1, heap: 60 * MB },
    { busy: 0.1, heap: 100 * MB },
    { busy: 0.1, heap: 100 * MB }, // due: waits
    { busy: 0.1, heap: 100 * MB }, // still waiting: not asked again
  ])
  const asked: number[] = []
  let quiet!: () => void
  const quietMoment = (maxWaitMs: number) => {
    asked.push(maxWaitMs)
    return new Promise<void>((resolve) => (quiet = resolve))
  }
  const release = createMemoryRelease({ slackBytes: 24 * MB, minSpacingMs: 60_000, quietMoment }, p)
  for (let k = 0; k < 4; k++) release.tick()
  assert.deepEqual(collected, [], 'not before the quiet moment')
  assert.equal(asked.length, 1)
  quiet()
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(collected.length, 1)
  assert.equal(release.releases, 1)
})

test('the real collection gives back a heap grown by garbage', () => {
  const release = releaseMemoryAfterBursts({ intervalMs: 3_600_000, slackBytes: 16 * MB, quiet: 1 })
  try {
    release.tick()
    let garbage: object[] | null = Array.from({ length: 600_000 }, (_, i) => ({ i, text: `x${i}` }))
    const grown = process.memoryUsage().heapTotal
    assert.ok(garbage.length > 0)
    garbage = null
    release.tick()
    assert.equal(release.releases, 0, 'the first tick that finds it grown')
    release.tick()
    assert.equal(release.releases, 1)
    assert.ok(
      process.memoryUsage().heapTotal < grown - 16 * MB,
      `heap total ${process.memoryUsage().heapTotal / MB} MB after, ${grown / MB} MB before`,
    )
  } finally {
    release.stop()
  }
})
