import type { WindowBlock } from '../domain/block-window.ts'
import { fenced, type WriteFence } from './chain-leases.ts'
import type { Db } from './database.ts'

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

/** Records a processed block: from now on a restart resumes after it. `fence`: only while this node leads. */
export async function saveChainBlock(db: Db, chain: string, block: WindowBlock, fence?: WriteFence): Promise<void> {
  await fenced(db, fence, (db) => insertChainBlock(db, chain, block))
}

/** The statement of `saveChainBlock`, for a transaction that holds the fence already (a block's verdicts). */
export async function insertChainBlock(db: Db, chain: string, block: WindowBlock): Promise<void> {
  await db
    .insertInto('chain_blocks')
    .values({ chain, number: block.number, hash: block.hash, parent_hash: block.parentHash, timestamp: block.timestamp })
    .onConflict((oc) =>
      oc.columns(['chain', 'number']).doUpdateSet({
        hash: block.hash,
        parent_hash: block.parentHash,
        timestamp: block.timestamp,
      }),
    )
    .execute()
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
