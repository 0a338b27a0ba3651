import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import { problem, problemBody } from '../http/problem.ts'

/**
 * Answers a WebSocket handshake that `ws` refused (a missing or malformed Sec-WebSocket-Key, an
 * unsupported Sec-WebSocket-Version, an unparsable subprotocol or extension header) as every other error
 * of the service is answered: a 400 `application/problem+json` (docs/api.md §6), instead of `ws`'s
 * text/html. The request has been taken over for the upgrade, so the answer is written on the socket itself.
 */
export function answerRefusedHandshake(error: Error, socket: Duplex): void {
  if (!socket.writable) return void socket.destroy()
  const versionRefused = /Sec-WebSocket-Version/.test(error.message)
  const refused = problem('BAD_WEBSOCKET_HANDSHAKE', `the WebSocket handshake was refused: ${error.message}`, {
    // RFC 6455 4.4: tell the client which versions this server speaks.
    headers: versionRefused ? { 'sec-websocket-version': '13, 8' } : {},
  })
  const body = JSON.stringify(problemBody(refused))
  const headers = {
    connection: 'close',
    'content-type': 'application/problem+json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    ...refused.headers,
  }
  socket.once('finish', () => socket.destroy())
  socket.end(
    `HTTP/1.1 ${refused.status} ${STATUS_CODES[refused.status]}\r\n${Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}`)
      .join('\r\n')}\r\n\r\n${body}`,
  )
}
