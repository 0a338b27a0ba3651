import type { WindowBlock } from '../domain/block-window.ts'
import { sql } from 'kysely'
import { fenced, LeadershipLostError, type WriteFence } from './chain-leases.ts'
import type { Db } from './infrastructure/database.ts'

/** The stored window of one chain, oldest first (empty before the chain was ever followed). */
export async function loadChainWindow(db: Db, chain: string): Promise<WindowBlock[]> {
  const rows = await db.selectFrom('chain_blocks').selectAll().where('chain', '=', chain).orderBy('number').execute()
  return rows.map((row) => ({
    number: BigInt(row.number),
    hash: row.hash as WindowBlock['hash'],
    parentHash: row.parent_hash as WindowBlock['parentHash'],
    timestamp: BigInt(row.timestamp),
  }))
}

/**
 * Records a processed block: from now on a restart resumes after it. `fence`: only while this node leads,
 * in one statement (the lease row read FOR SHARE as the insert's source: a take-over waits for it, and
 * nothing is written after one), where a transaction would take four turns of the connection per block.
 */
export async function saveChainBlock(db: Db, chain: string, block: WindowBlock, fence?: WriteFence): Promise<void> {
  if (!fence) return insertChainBlock(db, chain, block)
  const result = await sql`
    INSERT INTO chain_blocks (chain, number, hash, parent_hash, timestamp)
    SELECT ${chain}, ${block.number.toString()}::bigint, ${block.hash}, ${block.parentHash}, ${block.timestamp.toString()}::bigint
    FROM chain_leases
    WHERE chain = ${fence.chain} AND holder = ${fence.holder} AND token = ${fence.token} AND expires_at > now()
    FOR SHARE
    ON CONFLICT (chain, number) DO UPDATE SET hash = excluded.hash, parent_hash = excluded.parent_hash, timestamp = excluded.timestamp`.execute(
    db,
  )
  if (Number(result.numAffectedRows ?? 0) === 0) throw new LeadershipLostError(fence.chain)
}

/** The statement of `saveChainBlock`, for a transaction that holds the fence already (a block's verdicts). */
export async function insertChainBlock(db: Db, chain: string, block: WindowBlock): Promise<void> {
  await chainBlockInsert(db, chain, block).execute()
}

/** The insert of `insertChainBlock`, unexecuted (a part of a completion's one statement, completion-writes.ts). */
export function chainBlockInsert(db: Db, chain: string, block: WindowBlock) {
  return db
    .insertInto('chain_blocks')
    .values({ chain, number: block.number, hash: block.hash, parent_hash: block.parentHash, timestamp: block.timestamp })
    .onConflict((oc) =>
      oc.columns(['chain', 'number']).doUpdateSet({
        hash: block.hash,
        parent_hash: block.parentHash,
        timestamp: block.timestamp,
      }),
    )
}

/** A reorg: the blocks above the common ancestor are no longer canonical. */
export async function deleteChainBlocksAbove(db: Db, chain: string, number: bigint, fence?: WriteFence): Promise<void> {
  await fenced(db, fence, (db) =>
    db.deleteFrom('chain_blocks').where('chain', '=', chain).where('number', '>', number.toString()).execute(),
  )
}

/** Finality: blocks below the finalized one can no longer change and need not be kept. */
export async function deleteChainBlocksBelow(db: Db, chain: string, number: bigint, fence?: WriteFence): Promise<void> {
  await fenced(db, fence, (db) =>
    db.deleteFrom('chain_blocks').where('chain', '=', chain).where('number', '<', number.toString()).execute(),
  )
}

/** Each followed chain's newest processed block (readiness on nodes that do not follow it). */
export async function latestChainBlocks(db: Db): Promise<Map<string, { number: bigint; timestamp: bigint }>> {
  const rows = await db
    .selectFrom('chain_blocks as b')
    .select(['b.chain', 'b.number', 'b.timestamp'])
    .where(({ eb, selectFrom }) =>
      eb(
        'b.number',
        '=',
        selectFrom('chain_blocks as c')
          .select(({ fn }) => fn.max('c.number').as('n'))
          .whereRef('c.chain', '=', 'b.chain'),
      ),
    )
    .execute()
  return new Map(rows.map((row) => [row.chain, { number: BigInt(row.number), timestamp: BigInt(row.timestamp) }]))
}
