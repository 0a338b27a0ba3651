// A block runs in two rounds (chain-processor.ts): its own payments are judged and written first, and
// announced as that write commits; only then are the trackings matched earlier and the watched successes
// read and checked, and the block recorded with them. Real Anvil and a real database.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { KyselyPlugin, OperationNode } from 'kysely'
import { parseEther } from 'viem'
import { createTrackingEvents } from '../../src/common/tracking-events.ts'
import { NATIVE_TOKEN } from '../../src/domain/judge.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { followAnvil } from './follower-fixture.ts'
import { useTestDatabase } from '../support/database.ts'
import { sendNative, startAnvil, type Anvil } from '../support/index.ts'
import { insertTestTracking, randomAddress } from '../support/trackings.ts'

let anvil: Anvil
const database = useTestDatabase()
before(async () => {
  anvil = await startAnvil()
})
after(async () => {
  await anvil?.stop()
})

/** The table a statement reads or writes first, as far as this test needs to tell them apart. */
function tableOf(node: OperationNode): string {
  type Table = { table?: { identifier?: { name?: string } }; node?: Table }
  const named = node as { from?: { froms?: Table[] }; into?: Table }
  const first = named.from?.froms?.[0]
  // `from x as y` is an alias around the table.
  const from = (first?.node ?? first)?.table?.identifier?.name
  if (from) return `select ${from}`
  const into = named.into?.table?.identifier?.name
  if (into) return `insert ${into}`
  const raw = (node as { sqlFragments?: readonly string[] }).sqlFragments?.join(' ') ?? ''
  if (/UPDATE trackings AS t\s+SET status/.test(raw)) return 'verdicts'
  if (/FROM success_watches w/.test(raw)) return 'select success_watches'
  return node.kind
}

test("a block's own payment is written and announced before the follow-up reads matched trackings and watched successes", async () => {
  const events = createTrackingEvents()
  const steps: string[] = []
  const noting: KyselyPlugin = {
    transformQuery: (args) => {
      steps.push(tableOf(args.node))
      return args.node
    },
    transformResult: async (args) => args.result,
  }
  const db = database.db.withPlugin(noting)
  events.on('completed', () => void steps.push('announced'))
  const { follower } = followAnvil(anvil, db, { events })
  await follower.sync()

  const [, payer] = anvil.accounts
  const tracking = await insertTestTracking(database.db, (await createAccount(database.db, 'two rounds')).id, {
    blockchain: 'ethereum',
    sender: payer!.address.toLowerCase(),
    nonce: BigInt(await anvil.publicClient.getTransactionCount({ address: payer!.address })),
    receiver: randomAddress(),
    token: NATIVE_TOKEN,
    amount: '1',
    decimals: 18,
    transaction: null,
    afterBlock: await anvil.publicClient.getBlockNumber(),
    confirmations: 1,
  })
  await sendNative(anvil, payer!, tracking.receiver as `0x${string}`, parseEther('1'))
  steps.length = 0
  await follower.sync()

  const at = (step: string) => steps.indexOf(step)
  assert.ok(at('verdicts') >= 0 && at('announced') > at('verdicts'), `the payment is written, then announced: ${steps.join(', ')}`)
  assert.ok(at('select tracking_matches') > at('announced'), `matched trackings are read after the announcement: ${steps.join(', ')}`)
  assert.ok(at('select success_watches') > at('announced'), 'watched successes too')
  const row = await database.db.selectFrom('trackings').select('status').where('id', '=', tracking.id).executeTakeFirstOrThrow()
  assert.equal(row.status, 'success')
  const recorded = await database.db
    .selectFrom('chain_blocks')
    .select('number')
    .where('chain', '=', 'ethereum')
    .orderBy('number', 'desc')
    .executeTakeFirstOrThrow()
  assert.equal(BigInt(recorded.number), await anvil.publicClient.getBlockNumber(), 'the block is recorded as processed')
})
