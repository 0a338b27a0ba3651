import { Counter } from 'prom-client'
import type { Common } from '../common/common.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { findFirstTrackingsByDeadline, findFirstTrackingsOfPayments, type PaymentKey } from '../store/payment-lookups.ts'
import { type ChannelKey, channelKeyString, isDeadlineKey } from './channel-key.ts'

/** A cached answer is trusted this long at most, in case an event that should have cleared it was lost. */
const CACHE_TTL_MS = 2000
/** Payments whose answer is kept; the oldest are forgotten first. */
const CACHE_ENTRIES = 10_000
/** Payments read in one statement. */
const BATCH_SIZE = 200

export interface ChannelTrackings {
  /** The tracking the channel of the payment follows (the first created), as stored now; undefined when none. */
  of(key: ChannelKey): Promise<Tracking | undefined>
  /** A tracking of the payment changed: the next `of` reads it again. */
  forget(key: ChannelKey): void
  /**
   * A tracking of this (blockchain, sender, receiver) changed: every deadline key of it is read again
   * (a tracking does not carry the deadline it would be found by).
   */
  forgetGroup(group: string): void
  /** Events may have been missed (the LISTEN connection was down): read everything again. */
  forgetAll(): void
}

/**
 * Every subscribe asks the database what its payment's widget should be shown; a client that sends
 * hundreds of subscribes must not cost hundreds of reads. Payments asked for while a read is on its
 * way are read together in the next one (one statement for many payments), a payment already being
 * read shares that read, and answers are cached until an event about the payment clears them.
 */
export function createChannelTrackings(common: Common, db: Db): ChannelTrackings {
  const reads = new Counter({
    name: 'paywatch_cable_state_reads_total',
    help: 'Database reads of the payments widget subscribers ask for (one read serves many payments)',
    registers: [common.metrics.registry],
  })
  const cache = new Map<string, { tracking: Tracking | undefined; at: number }>()
  /** Bumped by `forget`: a read that began before it must not cache what it found. */
  const generations = new Map<string, number>()
  let generationAll = 0
  const waiting = new Map<
    string,
    { key: ChannelKey; promise: Promise<Tracking | undefined>; settle(t: Tracking | undefined): void; fail(e: unknown): void }
  >()
  const inFlight = new Map<string, Promise<Tracking | undefined>>()
  let reading = false

  const readWaiting = async (): Promise<void> => {
    reading = true
    while (waiting.size > 0) {
      const batch = [...waiting.entries()].slice(0, BATCH_SIZE)
      for (const [k, entry] of batch) {
        waiting.delete(k)
        inFlight.set(k, entry.promise)
      }
      const startedAll = generationAll
      const started = new Map(batch.map(([k]) => [k, generations.get(k) ?? 0]))
      try {
        reads.inc()
        const found = await readFirstTrackings(
          db,
          batch.map(([, e]) => e.key),
        )
        const at = common.clock().getTime()
        for (const [k, entry] of batch) {
          const tracking = found.get(k)
          if (startedAll === generationAll && started.get(k) === (generations.get(k) ?? 0)) remember(k, tracking, at)
          entry.settle(tracking)
        }
      } catch (error) {
        for (const [, entry] of batch) entry.fail(error)
      } finally {
        for (const [k] of batch) {
          inFlight.delete(k)
          generations.delete(k)
          if (!cache.has(k) && !waiting.has(k)) leaveGroup(k)
        }
      }
    }
    reading = false
  }

  /** Cached and queued deadline keys by group, so that `forgetGroup` finds them without a scan. */
  const groups = new Map<string, Set<string>>()
  const groupOfString = (k: string): string | undefined => (k.startsWith('d:') ? k.slice(2, k.lastIndexOf(':')) : undefined)
  const joinGroup = (k: string) => {
    const group = groupOfString(k)
    if (group === undefined) return
    let members = groups.get(group)
    if (!members) groups.set(group, (members = new Set()))
    members.add(k)
  }
  const leaveGroup = (k: string) => {
    const group = groupOfString(k)
    const members = group === undefined ? undefined : groups.get(group)
    if (!members?.delete(k) || members.size > 0) return
    groups.delete(group!)
  }
  const uncache = (k: string) => {
    if (cache.delete(k) && !inFlight.has(k) && !waiting.has(k)) leaveGroup(k)
  }

  const remember = (k: string, tracking: Tracking | undefined, at: number) => {
    cache.delete(k)
    cache.set(k, { tracking, at })
    joinGroup(k)
    if (cache.size > CACHE_ENTRIES) uncache(cache.keys().next().value!)
  }

  const forget = (k: string) => {
    uncache(k)
    generations.set(k, (generations.get(k) ?? 0) + 1)
    // The generation only matters while a read of the payment is on its way.
    if (!inFlight.has(k)) generations.delete(k)
  }

  return {
    of(key) {
      const k = channelKeyString(key)
      const cached = cache.get(k)
      if (cached && common.clock().getTime() - cached.at < CACHE_TTL_MS) return Promise.resolve(cached.tracking)
      const shared = inFlight.get(k) ?? waiting.get(k)?.promise
      if (shared) return shared
      let settle!: (t: Tracking | undefined) => void
      let fail!: (e: unknown) => void
      const promise = new Promise<Tracking | undefined>((resolve, reject) => ((settle = resolve), (fail = reject)))
      waiting.set(k, { key, promise, settle, fail })
      joinGroup(k)
      // The first subscribe of a burst waits one turn, so that the rest of its frames join its read.
      if (!reading) {
        reading = true
        setImmediate(() => void readWaiting())
      }
      return promise
    },
    forget: (key) => forget(channelKeyString(key)),
    forgetGroup(group) {
      for (const k of [...(groups.get(group) ?? [])]) forget(k)
    },
    forgetAll() {
      cache.clear()
      groups.clear()
      for (const k of [...waiting.keys(), ...inFlight.keys()]) joinGroup(k)
      generationAll++
    },
  }
}

/** The followed tracking of each key (missing: none), nonce and deadline keys read in one statement each. */
async function readFirstTrackings(db: Db, keys: ChannelKey[]): Promise<Map<string, Tracking>> {
  const byNonce = keys.filter((key): key is PaymentKey => !isDeadlineKey(key))
  const byDeadline = keys.filter(isDeadlineKey)
  const [nonceFound, deadlineFound] = await Promise.all([
    byNonce.length > 0 ? findFirstTrackingsOfPayments(db, byNonce) : [],
    byDeadline.length > 0 ? findFirstTrackingsByDeadline(db, byDeadline) : [],
  ])
  return new Map([
    // Found by sender and nonce, so both are known (the casts only say so to a nullable type).
    ...nonceFound.map((t): [string, Tracking] => [
      channelKeyString({ blockchain: t.blockchain, sender: t.sender as string, nonce: t.nonce as bigint }),
      t,
    ]),
    ...deadlineFound.map(({ key, tracking }): [string, Tracking] => [channelKeyString(key), tracking]),
  ])
}
