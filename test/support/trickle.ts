import { connect, type Socket } from 'node:net'

export interface Trickle {
  socket: Socket
  /** Everything the server sent, once it closed the connection. */
  closed: Promise<string>
  stop(): void
}

/**
 * A slow client: sends `head` (request line and headers, or part of them), then one byte of `drip` every
 * `everyMs` without ever finishing what it announced, as a slowloris attacker would.
 */
export function trickle(port: number, head: string, options: { drip?: string; everyMs?: number } = {}): Promise<Trickle> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let received = ''
    let timer: NodeJS.Timeout | undefined
    const closed = new Promise<string>((done) =>
      socket.on('close', () => {
        clearInterval(timer)
        done(received)
      }),
    )
    socket.on('data', (chunk) => (received += chunk))
    socket.once('error', reject)
    socket.on('connect', () => {
      socket.off('error', reject)
      socket.on('error', () => {})
      socket.write(head)
      timer = setInterval(() => socket.write(options.drip ?? 'x'), options.everyMs ?? 200)
      resolve({
        socket,
        closed,
        stop: () => {
          clearInterval(timer)
          socket.destroy()
        },
      })
    })
  })
}
