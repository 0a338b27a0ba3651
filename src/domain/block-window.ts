import type { Hash } from 'viem'

/** A block's identity and place in the chain: what a reorg check compares. */
export interface BlockHeader {
  number: bigint
  hash: Hash
  parentHash: Hash
  /** Seconds since the epoch. */
  timestamp: bigint
}

export type WindowBlock = Pick<BlockHeader, 'number' | 'hash' | 'parentHash' | 'timestamp'>

/**
 * The unfinalized part of the chain as the follower last saw it: consecutive blocks, each linked
 * to the previous one by `parentHash`. The oldest block kept is the last finalized one, the anchor
 * against which reorgs are resolved.
 */
export class BlockWindow {
  private blocks: WindowBlock[] = []
  private readonly maxSize: number

  constructor(blocks: WindowBlock[] = [], maxSize = 2048) {
    this.maxSize = maxSize
    for (const block of [...blocks].sort((a, b) => (a.number < b.number ? -1 : 1))) {
      // A stored window with a hole (should not happen) restarts from the block after it.
      if (this.tip && (block.number !== this.tip.number + 1n || block.parentHash !== this.tip.hash)) this.blocks = []
      this.blocks.push(block)
    }
  }

  get tip(): WindowBlock | undefined {
    return this.blocks.at(-1)
  }

  get oldest(): WindowBlock | undefined {
    return this.blocks[0]
  }

  get size(): number {
    return this.blocks.length
  }

  /** Its blocks, oldest first (a copy: the window moves on). */
  entries(): WindowBlock[] {
    return [...this.blocks]
  }

  get(number: bigint): WindowBlock | undefined {
    const first = this.blocks[0]
    if (!first || number < first.number) return undefined
    return this.blocks[Number(number - first.number)]
  }

  /** Whether `block` extends the tip (or starts an empty window). */
  extends(block: Pick<WindowBlock, 'number' | 'parentHash'>): boolean {
    const tip = this.tip
    return !tip || (block.number === tip.number + 1n && block.parentHash === tip.hash)
  }

  push(block: WindowBlock): void {
    if (!this.extends(block)) throw new Error(`block ${block.number} does not extend the window tip ${this.tip?.number}`)
    this.blocks.push(block)
    if (this.blocks.length > this.maxSize) this.blocks.splice(0, this.blocks.length - this.maxSize)
  }

  /** Drops every block above `number` (a reorg's common ancestor); returns them, oldest first. */
  truncateAbove(number: bigint): WindowBlock[] {
    const first = this.blocks[0]
    if (!first) return []
    const keep = Math.max(0, Number(number - first.number + 1n))
    return this.blocks.splice(keep)
  }

  /** Forgets blocks below `number` (finalized: they can no longer change); keeps at least the tip. */
  pruneBelow(number: bigint): void {
    const first = this.blocks[0]
    if (!first) return
    const drop = Math.min(this.blocks.length - 1, Math.max(0, Number(number - first.number)))
    if (drop > 0) this.blocks.splice(0, drop)
  }

  /**
   * Whether the window holds `hash` at `number`: true or false inside the window, undefined for a
   * number outside it (older blocks are final; newer ones are not seen yet).
   */
  holds(number: bigint, hash: string): boolean | undefined {
    const block = this.get(number)
    if (!block) return undefined
    return block.hash === hash
  }

  clear(): void {
    this.blocks = []
  }
}
