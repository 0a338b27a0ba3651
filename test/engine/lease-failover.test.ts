// Two and three `paywatch serve` processes on one PostgreSQL database, the way nodes really fail:
// - SIGSTOP (a frozen process keeps its TCP sessions alive): another node follows within 15 s and
//   judges the payments; woken with SIGCONT, the old leader writes nothing more for the chain (every
//   write is logged by a trigger with the writing node's application_name) and stands by;
// - SIGTERM: the lease is released and the standby, told by NOTIFY, takes over at once;
// - SIGKILL: the dead node's lease connection is gone, so the standby takes over within 5 s, and no
//   block is skipped.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { parseEther, type Address } from 'viem'
import { openDatabase } from '../../src/store/infrastructure/database.ts'
import { migrate } from '../../src/store/infrastructure/migrate.ts'
import { sendNative, startAnvil, type Anvil, type AnvilAccount } from '../support/index.ts'
import { createFreshDatabaseUrl, dropDatabase, onPostgres } from '../support/database.ts'
import { startCluster, type Cluster, type ClusterNode } from '../support/node-cluster.ts'
import { freshAddress, NATIVE, waitFor } from './support.ts'

describe('node failures with real processes', onPostgres, () => {
  let anvil: Anvil
  let url: string
  let cluster: Cluster
  let apiKey: string
  let payments = 0

  before(async () => {
    anvil = await startAnvil({ blockTime: 1 })
    url = (await createFreshDatabaseUrl())!
    const database = await openDatabase({ databaseUrl: url, dataDir: 'memory://' })
    await migrate(database.db)
    await database.close()
    cluster = await startCluster(url, anvil)
    await logWrites(cluster)
    await Promise.all([cluster.start('node-a'), cluster.start('node-b')])
    apiKey = await cluster.newApiKey(cluster.nodes[0]!)
  })
  after(async () => {
    await cluster?.close()
    if (url) await dropDatabase(url)
    await anvil?.stop()
  })

  /** A payment tracked through `via`, then paid on chain; resolves with its secret id. */
  const pay = async (via: ClusterNode, sender: AnvilAccount): Promise<string> => {
    const receiver: Address = freshAddress()
    const secretId = `lease-${process.pid}-${++payments}`
    const created = await cluster.api(via, apiKey, 'POST', '/v2/payments', {
      blockchain: 'ethereum',
      sender: sender.address,
      token: NATIVE,
      receiver,
      amount: '1',
      confirmations: 1,
      nonce: String(await anvil.publicClient.getTransactionCount({ address: sender.address })),
      after_block: String(await anvil.publicClient.getBlockNumber()),
      secret_id: secretId,
      callback: 'https://merchant.example/callback',
    })
    assert.equal(created.status, 201, JSON.stringify(created.json))
    await sendNative(anvil, sender, receiver, parseEther('1'))
    return secretId
  }
  const judged = (via: ClusterNode, secretId: string, timeoutMs: number) =>
    waitFor(
      `payment ${secretId} judged`,
      async () => {
        const { json } = await cluster.api(via, apiKey, 'GET', `/v2/payments/${secretId}`)
        return json.status === 'pending' ? undefined : json.status
      },
      timeoutMs,
    )
  const leaderNode = async () => (await cluster.leader())?.node

  test('SIGSTOP: another node follows within 15 s; the woken node writes nothing for the chain and stands by', async () => {
    const frozen = await waitFor('a leader', leaderNode, 20_000)
    const other = cluster.nodes.find((n) => n !== frozen)!
    await waitFor(
      'the leader to process blocks',
      async () => ((await writesBy(cluster, frozen.name, 'chain_blocks')) > 0 ? true : undefined),
      20_000,
    )

    frozen.child.kill('SIGSTOP')
    const stoppedAt = Date.now()
    const during = await Promise.all([1, 2, 3].map((i) => pay(other, anvil.accounts[i]!)))
    await waitFor('the other node to take the chain', async () => ((await leaderNode()) === other ? true : undefined), 20_000)
    const takeoverMs = Date.now() - stoppedAt
    assert.ok(takeoverMs < 15_000, `took over ${takeoverMs} ms after the freeze`)
    for (const secretId of during) assert.equal(await judged(other, secretId, 10_000), 'success')
    const takenAt = (await cluster.leader())!.acquiredAt

    frozen.child.kill('SIGCONT')
    await waitFor(
      'the woken node to stand by',
      async () => (frozen.output().includes('lost the chain lead; standing by') ? true : undefined),
      10_000,
    )
    assert.equal(await judged(other, await pay(other, anvil.accounts[4]!), 10_000), 'success')
    assert.equal(await leaderNode(), other, 'the woken node did not take the chain back')
    assert.equal(await writesBy(cluster, frozen.name, undefined, takenAt), 0, 'no write of the woken node after the take-over')
  })

  test('SIGTERM: the lease is handed over at once', async () => {
    const leader = (await leaderNode())!
    const standby = cluster.nodes.find((n) => n !== leader && n.child.exitCode === null)!
    leader.child.kill('SIGTERM')
    const signalledAt = Date.now()
    await waitFor('the standby to take the chain', async () => ((await leaderNode()) === standby ? true : undefined), 10_000)
    const handoverMs = Date.now() - signalledAt
    assert.ok(handoverMs < 1_000, `handed over after ${handoverMs} ms`)
    await leader.exited
  })

  test('SIGKILL: another node follows within 5 s and no block is skipped', async () => {
    const spare = await cluster.start('node-c')
    const leader = (await leaderNode())!
    assert.notEqual(leader, spare)
    await waitFor(
      'the leader to process more blocks',
      async () => ((await writesBy(cluster, leader.name, 'chain_blocks')) > 0 ? true : undefined),
      20_000,
    )
    leader.child.kill('SIGKILL')
    const killedAt = Date.now()
    const during = await pay(spare, anvil.accounts[5]!)
    await waitFor('the spare node to take the chain', async () => ((await leaderNode()) === spare ? true : undefined), 10_000)
    const takeoverMs = Date.now() - killedAt
    assert.ok(takeoverMs < 5_000, `took over ${takeoverMs} ms after the kill`)
    assert.equal(await judged(spare, during, 10_000), 'success')

    const { rows } = await cluster.db.query<{ number: string }>(
      "SELECT DISTINCT number::text AS number FROM test_writes WHERE tab = 'chain_blocks' AND number IS NOT NULL ORDER BY 1",
    )
    const numbers = rows.map((row) => Number(row.number)).sort((x, y) => x - y)
    const missing = numbers.slice(1).filter((n, i) => n !== numbers[i]! + 1)
    assert.deepEqual(missing, [], `every block from ${numbers[0]} to ${numbers.at(-1)} was processed`)
  })
})

/** Records every write to the chain's progress, matches and verdicts, with the writing node's name. */
async function logWrites(cluster: Cluster): Promise<void> {
  await cluster.db.query(`
    CREATE TABLE test_writes (app text, tab text, number bigint, at timestamptz DEFAULT clock_timestamp());
    CREATE FUNCTION log_block_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      INSERT INTO test_writes (app, tab, number) VALUES (current_setting('application_name'), TG_TABLE_NAME,
        CASE WHEN TG_OP = 'DELETE' THEN NULL ELSE NEW.number END);
      RETURN NULL; END $$;
    CREATE FUNCTION log_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      INSERT INTO test_writes (app, tab) VALUES (current_setting('application_name'), TG_TABLE_NAME);
      RETURN NULL; END $$;
    CREATE TRIGGER log_chain_blocks AFTER INSERT OR UPDATE OR DELETE ON chain_blocks FOR EACH ROW EXECUTE FUNCTION log_block_write();
    CREATE TRIGGER log_matches AFTER INSERT OR UPDATE OR DELETE ON tracking_matches FOR EACH ROW EXECUTE FUNCTION log_write();
    CREATE TRIGGER log_verdicts AFTER UPDATE ON trackings FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION log_write();
  `)
}

async function writesBy(cluster: Cluster, app: string, tab?: string, after?: Date): Promise<number> {
  const { rows } = await cluster.db.query<{ n: string }>(
    'SELECT count(*) AS n FROM test_writes WHERE app = $1 AND ($2::text IS NULL OR tab = $2) AND ($3::timestamptz IS NULL OR at > $3)',
    [app, tab ?? null, after ?? null],
  )
  return Number(rows[0]!.n)
}
