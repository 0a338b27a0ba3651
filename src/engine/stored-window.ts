import { BlockWindow, type WindowBlock } from '../domain/block-window.ts'
import { deleteChainBlocksAbove, deleteChainBlocksBelow, loadChainWindow, saveChainBlock } from '../store/chain-blocks.ts'
import type { WriteFence } from '../store/chain-leases.ts'
import type { Db } from '../store/infrastructure/database.ts'

export interface StoredWindowDeps {
  db: Db
  chain: string
  /** The lease this node follows the chain under: the stored window is written only while it holds. */
  fence?: WriteFence
  /** Blocks kept below the finalized one before the stored window is pruned (amortizes the delete). */
  pruneSlack: bigint
}

/**
 * The follower's window of unfinalized blocks, in memory and in the database in step: loaded once
 * (a restart goes on where the last run stopped), each change written through. The stored copy is
 * pruned in steps of `pruneSlack` blocks, not on every finalized block.
 */
export class StoredWindow {
  #window: BlockWindow | undefined
  /** Oldest block still stored. */
  #storedOldest = 0n
  readonly #deps: StoredWindowDeps

  constructor(deps: StoredWindowDeps) {
    this.#deps = deps
  }

  /** The window, once `load` read it. */
  get loaded(): BlockWindow | undefined {
    return this.#window
  }

  async load(): Promise<BlockWindow> {
    if (!this.#window) {
      this.#window = new BlockWindow(await loadChainWindow(this.#deps.db, this.#deps.chain))
      this.#storedOldest = this.#window.oldest?.number ?? 0n
    }
    return this.#window
  }

  /** Records `entry` (the sink handled its block) as the new tip. */
  async append(win: BlockWindow, entry: WindowBlock): Promise<void> {
    await saveChainBlock(this.#deps.db, this.#deps.chain, entry, this.#deps.fence)
    win.push(entry)
  }

  /** `entry` is the new tip, recorded already (with its block's verdicts). */
  adopt(win: BlockWindow, entry: WindowBlock): void {
    win.push(entry)
  }

  /** Forgets the stored blocks above `ancestor` (the window in memory was truncated already). */
  async dropAbove(ancestor: bigint): Promise<void> {
    await deleteChainBlocksAbove(this.#deps.db, this.#deps.chain, ancestor, this.#deps.fence)
  }

  /** Forgets the blocks below `finalized`: at once in memory, in steps of `pruneSlack` in the database. */
  async pruneBelow(win: BlockWindow, finalized: bigint): Promise<void> {
    win.pruneBelow(finalized)
    const oldest = win.oldest!.number
    if (oldest - this.#storedOldest >= this.#deps.pruneSlack) {
      await deleteChainBlocksBelow(this.#deps.db, this.#deps.chain, oldest, this.#deps.fence)
      this.#storedOldest = oldest
    }
  }
}
