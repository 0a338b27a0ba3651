import type { FastifyInstance } from 'fastify'
import type { Tracking } from '../domain/tracking.ts'
import { listDeliveries } from '../store/deliveries.ts'
import { findTrackingState } from '../store/payment-timeline.ts'
import type { DashboardDeps } from './deps.ts'
import { liveSession } from './session.ts'
import type { SessionStreams } from './session-streams.ts'

/** How often a stream looks at what the tracking events do not announce: chain heads, callback attempts. */
const POLL_MS = 2_000
/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000
/** Refreshes of a busy overview are sent at most this often. */
const REFRESH_GAP_MS = 1_000

/**
 * Server-sent events for live pages (`data-live` on the page's main element; static/dashboard.js
 * listens): `refresh` asks the page to fetch itself again, `progress` carries a pending payment's
 * confirmations so they count up in place. Fed by this node's tracking event bus, and by a light poll
 * (every 2 s) of what has no event here: chain heads, callback attempts, other nodes' verdicts.
 *
 * A stream lives only as long as its session: sign-out on this node ends it at once (session-streams.ts),
 * and every poll looks at the session again, so a sign-out on another node, "sign out all sessions" from
 * the admin API or a rotated admin token ends it within one poll.
 */
export async function liveRoutes(app: FastifyInstance, deps: DashboardDeps & { streams: SessionStreams }): Promise<void> {
  app.addHook('preClose', async () => deps.streams.endAll())

  app.get<{ Querystring: { topic?: string } }>('/dashboard/events', async (request, reply) => {
    const topic = request.query.topic ?? ''
    const trackingId = topic.startsWith('payment:') ? topic.slice('payment:'.length) : undefined
    if (topic !== 'overview' && !trackingId) return reply.code(400).type('text/plain').send('unknown topic')

    reply.hijack()
    const response = reply.raw
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      'x-content-type-options': 'nosniff',
    })
    response.write('retry: 3000\n\n')
    const send = (event: string, data: unknown = {}) => void response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)

    let lastRefresh = 0
    let pending: NodeJS.Timeout | undefined
    const refresh = () => {
      if (pending) return
      const wait = Math.max(0, lastRefresh + REFRESH_GAP_MS - performance.now())
      pending = setTimeout(() => {
        pending = undefined
        lastRefresh = performance.now()
        send('refresh')
      }, wait)
    }
    const concerns = (tracking: Tracking) => trackingId === undefined || tracking.id === trackingId
    const onChange = (tracking: Tracking) => void (concerns(tracking) && refresh())
    const onProgress = (event: { tracking: Tracking; required: number; passed: number }) => {
      if (trackingId === undefined) return refresh()
      if (event.tracking.id === trackingId) send('progress', { passed: event.passed, required: event.required })
    }
    deps.events.on('tracked', onChange)
    deps.events.on('completed', onChange)
    deps.events.on('released', onChange)
    deps.events.on('progress', onProgress)

    let lastLook: string | undefined
    // Other nodes' events do not reach this bus: the chain heads (overview), or the payment's status,
    // its chain's head while it is pending and its delivery log (payment page) are looked at instead.
    const paymentState = async (id: string) => {
      const state = await findTrackingState(deps.db, id)
      const head =
        state?.status === 'pending' ? (await deps.chainReadiness()).find((chain) => chain.name === state.blockchain)?.head : undefined
      const deliveries = (await listDeliveries(deps.db, id)).map((d) => [d.id, d.state, d.attempts, d.attemptLog.length])
      return JSON.stringify([state?.status, head, deliveries])
    }
    const sessionId = request.dashboardSession!.id
    const forget = deps.streams.add(sessionId, end)
    const look = async () => {
      if (!(await liveSession(deps, sessionId))) return end()
      const seen =
        trackingId === undefined
          ? JSON.stringify((await deps.chainReadiness()).map((chain) => [chain.name, chain.ok, chain.head]))
          : await paymentState(trackingId)
      if (lastLook !== undefined && seen !== lastLook) refresh()
      lastLook = seen
    }
    const poll = setInterval(() => void look().catch((error) => request.log.debug({ err: error }, 'dashboard live poll failed')), POLL_MS)
    const keepAlive = setInterval(() => void response.write(': keep-alive\n\n'), KEEPALIVE_MS)
    void look().catch(() => {})

    let ended = false
    function end(): void {
      if (ended) return
      ended = true
      forget()
      clearInterval(poll)
      clearInterval(keepAlive)
      clearTimeout(pending)
      deps.events.off('tracked', onChange)
      deps.events.off('completed', onChange)
      deps.events.off('released', onChange)
      deps.events.off('progress', onProgress)
      response.end()
    }
    request.raw.socket.once('close', end)
  })
}
