import type { Logger } from 'pino'
import type { ChainConfig } from '../config/chains.ts'
import type { WriteFence } from '../store/chain-leases.ts'
import type { Db } from '../store/infrastructure/database.ts'
import type { BlockHeader, BlockWindow, WindowBlock } from '../domain/block-window.ts'
import type { ChainReader, FullBlock } from '../chain/chain-reader.ts'
import { RetryableChainError } from '../chain/errors.ts'
import { NoProviderError } from '../chain/failover-transport.ts'
import { createFinality } from '../chain/finality.ts'
import { createFinalityCadence } from './finality-cadence.ts'
import { createLookahead } from './block-lookahead.ts'
import { createReachWaiters } from './reach-waiters.ts'
import { findCommonAncestor } from './reorg-ancestor.ts'
import { StoredWindow } from './stored-window.ts'
import { chainBlockInsert, saveChainBlock } from '../store/chain-blocks.ts'
import type { WritePart } from '../store/completion-writes.ts'

/** What the follower tells the engine, in chain order; the next event waits for the previous one. */
export type FollowerEvent =
  /**
   * A new canonical block; `finalized` is the finalized block number known at this point; `latest`:
   * it was the RPC's head when read (not a block caught up on), so its payments are news to announce now.
   */
  | { type: 'block'; block: FullBlock; finalized: bigint; latest?: boolean; record?: BlockRecord }
  /** The blocks above `ancestor` were replaced; the new branch follows as `block` events. */
  | { type: 'reorg'; ancestor: bigint; removed: WindowBlock[] }
  /** The finalized block advanced to `finalized` (`head` = the newest processed block). */
  | { type: 'finalize'; finalized: bigint; head: bigint }

/**
 * `record` on a block event writes the block as processed (`chainBlockInsert`, under the lease `fence`):
 * a sink that writes it in the transaction of the block's verdicts (one fence check, one commit for the
 * block) answers 'recorded', and the follower does not write it again. Never written when the sink failed.
 */
export interface BlockRecord {
  fence: WriteFence | undefined
  /** The block's insert, unexecuted, for a transaction that holds `fence` already (run with the verdicts' writes). */
  insert(db: Db): WritePart
  /** On its own (a block without verdicts): one statement under `fence`. */
  save(): Promise<void>
}

/** The follower's window as its events' handler sees it: whether `hash` is canonical at `number` (undefined outside it). */
export interface WindowView {
  holds(number: bigint, hash: string): boolean | undefined
  /** The blocks the window holds, oldest first (one per height). */
  blocks(): readonly { number: bigint; hash: string }[]
}

/** Handles one event, with the window it happened in (the block of a `block` event is not in it yet). */
export type FollowerSink = (event: FollowerEvent, window: WindowView) => Promise<'recorded' | void>

export interface FollowerState {
  head: WindowBlock | undefined
  /**
   * The newest head a sync learned of, before reading any block up to it: every block whose payments
   * are read is at or below it, so a payment above it is found by a block still to come.
   */
  seen: bigint | undefined
  finalized: bigint
  /** Wall time (ms) of the last sync that reached the RPC's head. */
  syncedAt: number | undefined
  lastError: string | undefined
}

export interface BlockFollower {
  /**
   * Brings the chain up to the RPC's head, at most `maxBlocks` blocks at a time: false when it
   * stopped at that limit (call again at once), true when there is nothing more to do until the
   * next head (reached it, or the RPC does not serve the next block yet).
   */
  sync(maxBlocks?: number, announced?: BlockHeader): Promise<boolean>
  /** Whether the window holds `hash` at `number` (undefined outside the window). */
  holds(number: bigint, hash: string): boolean | undefined
  /**
   * Resolves true once a block at or above `number` is processed; false when the syncs under way or
   * queued end short of it (the RPC does not serve it yet, a reorg shortened the chain), or none is.
   */
  reached(number: bigint): Promise<boolean>
  readonly state: FollowerState
}

export interface FollowerDeps {
  chain: ChainConfig
  reader: ChainReader
  db: Db
  sink: FollowerSink
  logger: Logger
  now?: () => number
  /** Blocks kept below the finalized one before the stored window is pruned (amortizes the delete). */
  pruneSlack?: number
  /** The lease this node follows the chain under: progress is written only while it holds. */
  fence?: WriteFence
  /**
   * Checks the providers' identity again (see chain-identity.ts) before a reorg is walked back: a
   * "reorg" may be a provider that now serves another chain (a development node restarted under
   * the same URL), whose blocks must never replace the stored ones. False: no provider serves the chain.
   */
  verifyIdentity?: () => Promise<boolean>
  /** The next block's header is known before the block is read (the sink may start its reads). */
  prepare?: (header: BlockHeader) => void
  /**
   * How often the RPC's `finalized` tag is read (finality-cadence.ts): every `every` heads (default
   * FINALITY_READ_EVERY), and at every head while `awaited()` (a payment's verdict waits for finality).
   */
  finality?: { every?: number; awaited?: () => boolean }
}

/**
 * Follows one chain block by block: keeps the window of unfinalized blocks linked by parentHash,
 * fetches every block between the last processed one and the head (gaps after a pause or a
 * restart), walks back to the common ancestor on a reorg, and tracks finality (the RPC's
 * `finalized` tag, or `finalityDepth` below the head when configured, or `fallbackFinalityDepth`
 * when the RPC does not know the tag). A block is recorded as processed only after the sink
 * handled it: a crash replays it, never skips it. The window's storage is stored-window.ts, the
 * walk back to the ancestor reorg-ancestor.ts, the reads ahead block-lookahead.ts.
 */
export function createBlockFollower(deps: FollowerDeps): BlockFollower {
  const { chain, reader, db, sink } = deps
  const now = deps.now ?? Date.now
  const stored = new StoredWindow({ db, chain: chain.name, fence: deps.fence, pruneSlack: BigInt(deps.pruneSlack ?? 32) })
  /** After a reorg deeper than the window: the number to restart from with an empty window. */
  let restartAt: bigint | undefined
  const finality = createFinalityCadence(createFinality(chain, reader, deps.logger), deps.finality)
  const state: FollowerState = { head: undefined, seen: undefined, finalized: 0n, syncedAt: undefined, lastError: undefined }
  const waiters = createReachWaiters()
  const view: WindowView = {
    holds: (number, hash) => stored.loaded?.holds(number, hash),
    blocks: () => stored.loaded?.entries() ?? [],
  }

  const load = async (): Promise<BlockWindow> => {
    if (stored.loaded) return stored.loaded
    const window = await stored.load()
    state.head = window.tip
    // The stored window starts at the last finalized block seen.
    state.finalized = window.oldest?.number ?? 0n
    return window
  }

  const accept = async (win: BlockWindow, block: FullBlock, finalized: bigint, head?: bigint) => {
    const entry: WindowBlock = { number: block.number, hash: block.hash, parentHash: block.parentHash, timestamp: block.timestamp }
    const record: BlockRecord = {
      fence: deps.fence,
      insert: (db) => chainBlockInsert(db, chain.name, entry),
      save: () => saveChainBlock(deps.db, chain.name, entry, deps.fence),
    }
    const handled = await sink(
      {
        type: 'block',
        block,
        finalized: finalized < block.number ? finalized : block.number,
        latest: block.number === head,
        record,
      },
      view,
    )
    if (handled === 'recorded') stored.adopt(win, entry)
    else await stored.append(win, entry)
    state.head = entry
    waiters.reach(entry.number)
  }

  /** `from` is canonical but does not extend the window: find the newest block both agree on. */
  const reorg = async (win: BlockWindow, from: BlockHeader) => {
    if (deps.verifyIdentity) {
      const serving = await deps.verifyIdentity()
      if (!serving) throw new NoProviderError()
      // A provider refused now may have shown this "reorg": read the chain again from the others.
      const still = await reader.header(from.number)
      if (!still || still.hash !== from.hash) throw new RetryableChainError('the providers changed during the sync; syncing again')
    }
    let ancestor = await findCommonAncestor(reader, win, from)
    if (ancestor === undefined) {
      // Deeper than every block kept (below finality): start over from the oldest block we had.
      const oldest = win.oldest
      ancestor = (oldest?.number ?? from.number) - 1n
      deps.logger.error({ chain: chain.name, block: from.number, ancestor }, 'reorg deeper than the finalized window')
      restartAt = ancestor + 1n
    }
    const removed = win.truncateAbove(ancestor)
    if (restartAt !== undefined) win.clear()
    deps.logger.warn({ chain: chain.name, ancestor, depth: removed.length, block: from.number }, 'chain reorganized')
    await sink({ type: 'reorg', ancestor, removed }, view)
    await stored.dropAbove(ancestor)
    state.head = win.tip
  }

  const updateFinality = async (win: BlockWindow, known: bigint | undefined) => {
    const tip = win.tip
    if (!tip || known === undefined) return
    const finalized = known > tip.number ? tip.number : known
    if (finalized <= state.finalized) return
    await sink({ type: 'finalize', finalized, head: tip.number }, view)
    state.finalized = finalized
    await stored.pruneBelow(win, finalized)
  }

  /** One sync at a time: a second caller waits for the running one, then syncs itself. */
  let running: Promise<unknown> = Promise.resolve()
  let syncs = 0
  function sync(maxBlocks = 500, announced?: BlockHeader): Promise<boolean> {
    syncs++
    const next = running.then(
      () => syncOnce(maxBlocks, announced),
      () => syncOnce(maxBlocks, announced),
    )
    running = next
      .catch(() => {})
      .finally(() => {
        if (--syncs === 0) waiters.settle(state.head?.number)
      })
    return next
  }

  function reached(number: bigint): Promise<boolean> {
    const head = state.head?.number
    if (head !== undefined && head >= number) return Promise.resolve(true)
    return syncs === 0 ? Promise.resolve(false) : waiters.add(number)
  }

  async function syncOnce(maxBlocks: number, announced: BlockHeader | undefined): Promise<boolean> {
    const win = await load()
    // A newHeads notification of the block right after ours is the head: no round trip to ask for it
    // (anything else, a gap or another branch, is asked for as before).
    const next = announced && win.tip && announced.number === win.tip.number + 1n && announced.parentHash === win.tip.hash
    const head = next ? announced : await reader.header('latest')
    if (!head) throw new RetryableChainError('the RPC returned no latest block')
    state.seen = head.number
    if (win.tip?.number === head.number && win.tip.hash === head.hash) {
      state.syncedAt = now()
      state.lastError = undefined
      return true
    }
    const ahead = createLookahead(reader, head.number)
    if (win.tip) ahead.from(win.tip.number + 1n, maxBlocks)
    // Read once per sync, before the blocks, so that each block is judged with it.
    const finalizedRead = finality.at(head.number)
    // The head is the block right after ours: what its judging reads besides its transactions starts now, after
    // the block's own request (a node may answer requests in turn, as Anvil does: the block is what everything waits for).
    if (win.tip && head.number === win.tip.number + 1n && head.parentHash.toLowerCase() === win.tip.hash.toLowerCase()) deps.prepare?.(head)
    const finalizedNow = await finalizedRead
    const finalized = () => (finalizedNow !== undefined && finalizedNow > state.finalized ? finalizedNow : state.finalized)
    let processed = 0
    let limited = false
    for (;;) {
      const tip = win.tip
      if (!tip) {
        // First start (or after a reorg below the window): begin at the head, or where we stopped.
        const block = await reader.block(restartAt ?? head.number)
        if (!block) break
        restartAt = undefined
        await accept(win, block, finalized(), head.number)
        processed++
        continue
      }
      if (head.number <= tip.number) {
        const ours = win.get(head.number)
        if (ours && ours.hash !== head.hash) {
          await reorg(win, head)
          continue
        }
        break
      }
      if (processed >= maxBlocks) {
        limited = true
        break
      }
      ahead.from(tip.number + 1n, maxBlocks - processed)
      let block = await ahead.take(tip.number + 1n)
      // Read ahead before the reorg it reveals: read it again, now, before walking back from it.
      if (block && !win.extends(block) && ahead.read) block = await reader.block(tip.number + 1n)
      // The RPC (or the next URL after a failover) is behind the head it announced: wait.
      if (!block) break
      if (win.extends(block)) {
        await accept(win, block, finalized(), head.number)
        processed++
      } else {
        ahead.clear()
        await reorg(win, block)
      }
    }
    await updateFinality(win, finalizedNow)
    // Stopped at the limit while catching up: more to do at once.
    if (limited) return false
    if (win.tip !== undefined && win.tip.number >= head.number) state.syncedAt = now()
    state.lastError = undefined
    return true
  }

  return {
    sync,
    holds: view.holds,
    reached,
    state,
  }
}
