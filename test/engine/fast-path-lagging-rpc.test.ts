// A new tracking's check asks the RPC for its latest block first, and refuses an RPC behind the newest head the
// follower has seen (src/engine/fast-path.ts, `latestNotBehind`): that head's block may have read its candidates
// before the tracking was stored, and such an RPC would say "not mined yet" of a payment the block holds. The
// check is then retried (a retryable error), as any failed check is.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createChainReader } from '../../src/chain/chain-reader.ts'
import { RetryableChainError } from '../../src/chain/errors.ts'
import { checkNewTracking, type FastPathDeps } from '../../src/engine/fast-path.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { useTestDatabase } from '../support/database.ts'
import { startAnvil, type Anvil } from '../support/index.ts'
import { insertTestTracking } from '../support/trackings.ts'

let anvil: Anvil
const database = useTestDatabase()

before(async () => {
  anvil = await startAnvil()
})
after(async () => {
  await anvil?.stop()
})

/** The check's dependencies as far as a tracking whose nonce is unused needs them; the follower at `followed`, having seen `seen`. */
function depsWith(followed: bigint | undefined, seen: bigint | undefined): FastPathDeps {
  return {
    chain: 'ethereum',
    reader: createChainReader(anvil.publicClient),
    evidence: undefined as never,
    finality: undefined as never,
    verdicts: undefined as never,
    followerHead: () => followed,
    seenHead: () => seen,
    exclusive: (work) => work(),
  }
}

test('an RPC behind the head the follower has seen is refused; one at or past it is asked', async () => {
  const account = await createAccount(database.db, 'lagging rpc')
  const latest = await anvil.publicClient.getBlockNumber()
  const tracking = await insertTestTracking(database.db, account.id, {
    sender: anvil.accounts[1]!.address.toLowerCase(),
    nonce: 1_000n, // unused: nothing mined
    afterBlock: 0n,
    transaction: null,
  })
  await assert.rejects(
    checkNewTracking(depsWith(latest, latest + 2n), tracking),
    (error: Error) => error instanceof RetryableChainError && /behind block/.test(error.message),
    'seen two blocks past the RPC: refused',
  )
  await assert.rejects(checkNewTracking(depsWith(latest + 1n, undefined), tracking), RetryableChainError, 'behind the processed head too')
  assert.equal(await checkNewTracking(depsWith(latest, latest), tracking), 'waiting', 'at the seen head: checked, nothing mined')
  assert.equal(await checkNewTracking(depsWith(undefined, undefined), tracking), 'waiting', 'no follower: the RPC decides')
})
