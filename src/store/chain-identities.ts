import type { Db } from './infrastructure/database.ts'

/** What identifies a chain beyond its id: the hash of an early block (migration 0012). */
export interface ChainIdentity {
  chainId: number
  blockNumber: bigint
  blockHash: string
}

/**
 * The identity recorded for `chain`, recording `observed` first when none is (the first follow).
 * One statement: when two nodes start at once, the first identity written is the one both get back.
 */
export async function recordChainIdentity(db: Db, chain: string, observed: ChainIdentity, now: Date): Promise<ChainIdentity> {
  await db
    .insertInto('chain_identities')
    .values({
      chain,
      chain_id: observed.chainId,
      block_number: observed.blockNumber,
      block_hash: observed.blockHash.toLowerCase(),
      recorded_at: now,
    })
    .onConflict((oc) => oc.column('chain').doNothing())
    .execute()
  const row = await db.selectFrom('chain_identities').selectAll().where('chain', '=', chain).executeTakeFirstOrThrow()
  return { chainId: Number(row.chain_id), blockNumber: BigInt(row.block_number), blockHash: row.block_hash }
}
