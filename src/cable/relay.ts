import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { Common } from '../common/common.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { TrackingEventMap, TrackingEvents } from '../common/tracking-events.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { createPgListener, type PgListener } from '../store/infrastructure/pg-listener.ts'
import { type ChannelKey, channelRoutesOf, deadlineGroup } from './channel-key.ts'
import type { ChannelTrackings } from './channel-trackings.ts'
import type { CableHub } from './hub.ts'
import { confirmationsMessage, statusMessage, type WidgetMessage } from './widget-messages.ts'

export const EVENTS_CHANNEL = 'paywatch_events'

/**
 * What crosses nodes: small enough for NOTIFY (8000 bytes), the payment's keys (blockchain, sender,
 * nonce, receiver) so that a node without subscribers drops it without a query, the tracking id so that
 * one with subscribers reads the state itself, and the node that sent it so that it does not deliver its
 * own events twice. Sender and nonce are absent while a nonce-less tracking has not found its payment.
 */
interface Note {
  o: string
  k: 'progress' | 'completed' | 'released'
  id: string
  b: string
  s?: string
  n?: string
  /** The receiver (a deadline subscription is found by blockchain, sender and receiver). */
  v?: string
  r?: number
  p?: number
}

export interface CableRelayDeps {
  common: Common
  db: Db
  events: TrackingEvents
  hub: CableHub
  /** PostgreSQL URL: events are shared with other nodes. Null on the embedded database (one process). */
  databaseUrl: string | null
  channels: ChannelTrackings
  retryDelayMs?(attempt: number): number
}

export interface CableRelay {
  /** Starts listening for other nodes' events (PostgreSQL only). */
  start(): Promise<void>
  stop(): Promise<void>
}

/**
 * Carries tracking events to the widgets subscribed here: this node's events directly, other nodes'
 * through PostgreSQL NOTIFY/LISTEN. Each direction is processed in order, so a widget never sees
 * confirmations after the final state of the same node's events.
 *
 * A payment's channel follows only the tracking created first: the identifier is public, so another
 * account can track the same payment, and nothing of its tracking (confirmations, status, release,
 * forward_to) may reach the first one's widget. Every event names its tracking and is dropped unless
 * that is the followed one.
 */
export function createCableRelay(deps: CableRelayDeps): CableRelay {
  const { hub, db, common, channels } = deps
  const nodeId = randomUUID()
  let publishing: Promise<void> = Promise.resolve()
  let delivering: Promise<void> = Promise.resolve()
  let receiving: Promise<void> = Promise.resolve()
  let listener: PgListener | undefined

  /** The followed tracking of a payment someone here subscribed to: remembered by the hub, else read. */
  const followedBy = async (key: ChannelKey): Promise<string | undefined> => {
    const known = hub.followed(key)
    if (known) return known
    // An answer cached before the payment's first tracking was created would say "none".
    channels.forget(key)
    const tracking = await channels.of(key)
    if (tracking) hub.follow(key, tracking.id)
    return tracking?.id
  }
  const isFollowed = async (key: ChannelKey, trackingId: string): Promise<boolean> => (await followedBy(key)) === trackingId

  // Notes raised while a NOTIFY is on its way go out together in the next one: one statement per
  // batch, not per event (a burst of callbacks releases thousands of payments a second).
  let queued: string[] = []
  const publishQueued = async () => {
    const notes = queued
    queued = []
    // Volatile functions are evaluated after the ORDER BY, so the notes are sent in order.
    await sql`SELECT pg_notify(${EVENTS_CHANNEL}, note) FROM unnest(${notes}::text[]) WITH ORDINALITY AS q(note, i) ORDER BY i`.execute(db)
  }
  const share = (kind: Note['k'], t: Tracking, numbers: { r?: number; p?: number } = {}) => {
    if (!deps.databaseUrl) return
    // Widened: a nonce-less tracking has neither until its payment is found.
    const sender: string | null = t.sender
    const nonce: bigint | null = t.nonce
    const note: Note = {
      o: nodeId,
      k: kind,
      id: t.id,
      b: t.blockchain,
      ...(sender ? { s: sender } : {}),
      ...(nonce !== null ? { n: nonce.toString() } : {}),
      v: t.receiver,
      ...numbers,
    }
    queued.push(JSON.stringify(note))
    if (queued.length > 1) return
    publishing = publishing
      .then(publishQueued)
      .catch((error: unknown) => common.logger.warn({ err: error }, 'cable: could not share events with other nodes'))
  }

  // Listeners run inside the emitter's caller (the release endpoint, the engine): they never throw.
  const guarded =
    <A extends unknown[]>(handle: (...args: A) => void) =>
    (...args: A) => {
      try {
        handle(...args)
      } catch (error) {
        common.logger.error({ err: error }, 'cable: could not relay an event')
      }
    }
  const deliverInOrder = (work: () => Promise<void>) => {
    delivering = delivering.then(work).catch((error: unknown) => common.logger.warn({ err: error }, 'cable: could not deliver an event'))
  }
  /** The channels subscribed here that a tracking's event may concern (each checked against its followed one). */
  const subscribedKeys = (routes: { nonceKey?: ChannelKey; group?: string }): ChannelKey[] => [
    ...(routes.nonceKey && hub.hasSubscribers(routes.nonceKey) ? [routes.nonceKey] : []),
    ...(routes.group ? hub.deadlineKeys(routes.group) : []),
  ]
  const forgetRoutes = (routes: { nonceKey?: ChannelKey; group?: string }) => {
    if (routes.nonceKey) channels.forget(routes.nonceKey)
    if (routes.group) channels.forgetGroup(routes.group)
  }
  const publishFollowed = (keys: ChannelKey[], trackingId: string, message: WidgetMessage) => {
    if (keys.length === 0) return
    deliverInOrder(async () => {
      for (const key of keys) if (await isFollowed(key, trackingId)) hub.publish(key, message)
    })
  }
  const onProgress = guarded(({ tracking, required, passed }: TrackingEventMap['progress'][0]) => {
    publishFollowed(subscribedKeys(channelRoutesOf(tracking)), tracking.id, confirmationsMessage(required, passed))
    share('progress', tracking, { r: required, p: passed })
  })
  const onFinal = (kind: 'completed' | 'released') =>
    guarded((tracking: Tracking) => {
      const routes = channelRoutesOf(tracking)
      forgetRoutes(routes)
      const message = statusMessage(tracking)
      if (message) publishFollowed(subscribedKeys(routes), tracking.id, message)
      share(kind, tracking)
    })
  const onCompleted = onFinal('completed')
  const onReleased = onFinal('released')
  deps.events.on('progress', onProgress)
  deps.events.on('completed', onCompleted)
  deps.events.on('released', onReleased)

  const inOrder = (work: () => Promise<void>) => {
    receiving = receiving
      .then(work)
      .catch((error: unknown) => common.logger.warn({ err: error }, 'cable: could not relay an event of another node'))
  }

  const onNote = (payload: string) => {
    const note = parseNote(payload)
    if (!note || note.o === nodeId) return
    const routes = {
      ...(note.s && note.n ? { nonceKey: { blockchain: note.b, sender: note.s, nonce: BigInt(note.n) } } : {}),
      ...(note.s && note.v ? { group: deadlineGroup(note.b, note.s, note.v) } : {}),
    }
    if (note.k !== 'progress') forgetRoutes(routes)
    const keys = subscribedKeys(routes)
    if (keys.length === 0) return
    inOrder(async () => {
      for (const key of keys) {
        if (!(await isFollowed(key, note.id))) continue
        if (note.k === 'progress') {
          hub.publish(key, confirmationsMessage(note.r ?? 0, note.p ?? 0))
          continue
        }
        // The state as stored now: a later release may already be in it, which is what the widget wants.
        const tracking = await channels.of(key)
        const message = tracking?.id === note.id ? statusMessage(tracking) : undefined
        if (message) hub.publish(key, message)
      }
    })
  }

  /** Notifications sent while the connection was down are lost: tell every subscriber the state again. */
  const resync = () => {
    channels.forgetAll()
    for (const key of hub.keys()) {
      inOrder(async () => {
        const tracking = await channels.of(key)
        if (!tracking) return
        hub.follow(key, tracking.id)
        const message = statusMessage(tracking)
        if (message) hub.publish(key, message, { repeat: true })
      })
    }
  }

  return {
    async start() {
      if (!deps.databaseUrl || listener) return
      listener = createPgListener({
        url: deps.databaseUrl,
        channel: EVENTS_CHANNEL,
        logger: common.logger,
        onNotification: onNote,
        onReconnect: resync,
        retryDelayMs: deps.retryDelayMs,
      })
      await listener.start()
    },
    async stop() {
      deps.events.off('progress', onProgress)
      deps.events.off('completed', onCompleted)
      deps.events.off('released', onReleased)
      await listener?.stop()
      await Promise.all([publishing, delivering, receiving])
    },
  }
}

const kinds = new Set(['progress', 'completed', 'released'])

function parseNote(payload: string): Note | undefined {
  let data: unknown
  try {
    data = JSON.parse(payload)
  } catch {
    return undefined
  }
  if (typeof data !== 'object' || data === null) return undefined
  const note = data as Partial<Note>
  if (typeof note.o !== 'string' || typeof note.k !== 'string' || !kinds.has(note.k)) return undefined
  if (typeof note.id !== 'string' || typeof note.b !== 'string') return undefined
  if (note.s !== undefined && typeof note.s !== 'string') return undefined
  if (note.v !== undefined && typeof note.v !== 'string') return undefined
  if (note.n !== undefined && (typeof note.n !== 'string' || !/^\d{1,20}$/.test(note.n))) return undefined
  if (note.k === 'progress' && (!Number.isInteger(note.r) || !Number.isInteger(note.p))) return undefined
  return note as Note
}
