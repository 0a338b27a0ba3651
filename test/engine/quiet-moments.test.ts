// The chain engine's quiet moments (src/engine/quiet-moments.ts): periodic work that holds the main thread waits
// until a block was processed, so that it does not land on a block's way to its callbacks.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createQuietMoments } from '../../src/engine/quiet-moments.ts'
import { mine, startAnvil, type Anvil } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { startEngineService, waitFor } from './support.ts'

let anvil: Anvil
let service: TestService

before(async () => {
  anvil = await startAnvil()
  service = await startEngineService(anvil)
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

const settledYet = async (promise: Promise<void>) => {
  let settled = false
  void promise.then(() => (settled = true))
  await new Promise((resolve) => setImmediate(resolve))
  return settled
}

test('every waiter is released by the next block processed, or by its longest wait', async () => {
  const quiet = createQuietMoments()
  const [first, second] = [quiet.next(60_000), quiet.next(60_000)]
  assert.equal(await settledYet(first), false)
  quiet.blockProcessed()
  assert.equal(await settledYet(first), true)
  assert.equal(await settledYet(second), true)
  await quiet.next(1) // no block: the longest wait ends it
})

test('the engine’s quiet moment is right after a block it processed while it follows a chain', async () => {
  await waitFor('the engine to follow', async () => service.engine.runner('ethereum')?.follower?.state.head)
  const moment = service.engine.quietMoment(600_000)
  assert.equal(await settledYet(moment), false, 'no block processed yet')
  await mine(anvil, 1)
  await moment // else the test times out
})
