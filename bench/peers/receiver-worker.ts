// The notification receiver of bench:peers, in a worker thread (its own event loop): answers 200 at once
// and notes when each receiver address was announced, per system (the path: /paywatch, /ponder, /viem).
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parentPort } from 'node:worker_threads'

const arrived = new Map<string, number>()
const server = createServer((request, response) => {
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    const at = performance.timeOrigin + performance.now()
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end('{}')
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { receiver?: string }
      const key = `${request.url}:${String(body.receiver).toLowerCase()}`
      if (!arrived.has(key)) arrived.set(key, at)
    } catch {
      /* not a notification */
    }
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => parentPort!.postMessage({ port: (server.address() as AddressInfo).port }))
parentPort!.on('message', (message: { take: string[] }) => {
  parentPort!.postMessage({ times: message.take.map((key) => arrived.get(key) ?? null) })
})
