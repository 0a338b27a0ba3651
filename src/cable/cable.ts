import type { Common } from '../common/common.ts'
import type { Subsystem } from '../common/subsystem.ts'
import type { TrackingEvents } from '../common/tracking-events.ts'
import type { DatabaseHandle } from '../store/infrastructure/database.ts'
import type { ChannelKey } from './channel-key.ts'
import { createChannelTrackings } from './channel-trackings.ts'
import { createCableHub } from './hub.ts'
import { createCableRelay } from './relay.ts'
import { cableRoute, type Ticker } from './route.ts'
import { statusMessage, type WidgetMessage } from './widget-messages.ts'

export interface CableOptions {
  /** Drives the 3-second pings; tests pass one they tick by hand. */
  ticker?: Ticker
  /** Delay before the n-th reconnect of the LISTEN connection. */
  retryDelayMs?(attempt: number): number
}

/**
 * The widget channel: WebSocket route, subscriptions, and the relay of tracking events to them
 * (from this node directly, from other nodes through PostgreSQL LISTEN/NOTIFY). `GET /cable` is a public
 * route; the background work is receiving other nodes' events. This node's events are relayed from
 * construction on (also without background work), so the relay's stop goes to `common.shutdown` here.
 */
export function createCable(
  common: Common,
  deps: { database: DatabaseHandle; events: TrackingEvents },
  options: CableOptions = {},
): Subsystem {
  const db = deps.database.db
  const hub = createCableHub()
  const channels = createChannelTrackings(common, db)
  // Only the followed tracking's state: another account's tracking of the payment shows nothing here.
  const currentState = async (key: ChannelKey): Promise<WidgetMessage | undefined> => {
    const tracking = await channels.of(key)
    if (!tracking) return undefined
    hub.follow(key, tracking.id)
    return statusMessage(tracking)
  }
  const relay = createCableRelay({
    common,
    db,
    events: deps.events,
    hub,
    channels,
    retryDelayMs: options.retryDelayMs,
    databaseUrl: deps.database.kind === 'postgres' ? deps.database.url : null,
  })
  common.shutdown.add('cable relay', () => relay.stop())
  return {
    name: 'cable relay',
    publicRoutes: [cableRoute({ common, hub, currentState, ticker: options.ticker })],
    start: () => relay.start(),
  }
}
