import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createConcurrencyLimit } from '../../src/common/concurrency-limit.ts'

/** A work the test finishes by hand: `finish(true)` succeeds, `finish(false)` fails. */
function heldWork(log: string[], name: string) {
  let finish!: (ok: boolean) => void
  const work = () => {
    log.push(`start ${name}`)
    return new Promise<string>((resolve, reject) => {
      finish = (ok) => (ok ? resolve(name) : reject(new Error(name)))
    })
  }
  return { work, finish: (ok: boolean) => finish(ok) }
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

test('a concurrency limit runs at most its number at once, first come first served, and a failure frees its turn', async () => {
  const log: string[] = []
  const limit = createConcurrencyLimit(2)
  const works = ['a', 'b', 'c', 'd', 'e'].map((name) => heldWork(log, name))
  const results = works.map((w) =>
    limit(w.work).then(
      (value) => `ok ${value}`,
      (error: Error) => `failed ${error.message}`,
    ),
  )
  await turn()
  assert.deepEqual(log, ['start a', 'start b'])
  works[1]!.finish(false)
  await turn()
  assert.deepEqual(log, ['start a', 'start b', 'start c'], 'a failed work frees its turn for the next in line')
  // A work arriving now waits behind those already waiting.
  const late = heldWork(log, 'f')
  const lateResult = limit(late.work)
  works[0]!.finish(true)
  await turn()
  assert.deepEqual(log.slice(3), ['start d'])
  works[2]!.finish(true)
  works[3]!.finish(true)
  await turn()
  assert.deepEqual(log.slice(4), ['start e', 'start f'])
  works[4]!.finish(true)
  late.finish(true)
  assert.deepEqual(await Promise.all(results), ['ok a', 'failed b', 'ok c', 'ok d', 'ok e'])
  assert.equal(await lateResult, 'f')
})

test('a concurrency limit is a whole number from 1', () => {
  for (const max of [0, -1, 1.5, Number.NaN]) assert.throws(() => createConcurrencyLimit(max), RangeError)
})
