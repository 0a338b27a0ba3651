// How the quorum asks for votes (src/engine/quorum-votes.ts): as many at once as it needs, one more in
// the place of each that gives no answer, is slow or times out, and none once the answers are enough.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { gatherVotes } from '../../src/engine/quorum-votes.ts'

const never = new Promise<undefined>(() => {})

test('two at once; a failing one is replaced; stops once enough', async () => {
  const asked: number[] = []
  const answers = await gatherVotes<string>({
    candidates: [0, 1, 2, 3],
    parallel: 2,
    timeoutMs: 10_000,
    hedgeDelayMs: () => 10_000,
    ask: async (i) => {
      asked.push(i)
      if (i === 0) throw new Error('down')
      return 'x'
    },
    enough: (a) => a.size >= 2,
  })
  assert.deepEqual(asked, [0, 1, 2])
  assert.deepEqual([...answers.keys()].sort(), [1, 2])
})

test('a hanging provider: the next one is asked after its hedge delay, and it times out as no answer', async () => {
  const asked: number[] = []
  const hedged: number[] = []
  const answers = await gatherVotes<string>({
    candidates: [0, 1, 2],
    parallel: 2,
    timeoutMs: 50,
    hedgeDelayMs: (i) => (i === 0 ? 5 : 10_000),
    onHedge: (i) => hedged.push(i),
    ask: (i) => {
      asked.push(i)
      return i === 0 ? never : Promise.resolve(`answer ${i}`)
    },
    enough: (a) => a.size >= 2,
  })
  assert.deepEqual(asked, [0, 1, 2])
  assert.deepEqual(hedged, [0])
  assert.deepEqual([...answers.keys()].sort(), [1, 2])
})

test('answers that are not enough: one more at a time until every provider was asked', async () => {
  const asked: number[] = []
  const answers = await gatherVotes<number>({
    candidates: [0, 1, 2],
    parallel: 1,
    timeoutMs: 10_000,
    hedgeDelayMs: () => 10_000,
    ask: async (i) => {
      asked.push(i)
      return i
    },
    enough: () => false,
  })
  assert.deepEqual(asked, [0, 1, 2])
  assert.equal(answers.size, 3)
  assert.equal(
    (await gatherVotes({ candidates: [], parallel: 2, timeoutMs: 1, hedgeDelayMs: () => 1, ask: async () => 1, enough: () => true })).size,
    0,
  )
})
