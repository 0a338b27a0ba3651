import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { test } from 'node:test'
import { Worker } from 'node:worker_threads'
import { CallbackTimeoutError, createCallbackSender } from '../../src/callbacks/sender.ts'
import { startReceiver } from './support.ts'

/**
 * A listener whose accept queue is full: its thread listens with a backlog of 1 (0 would mean Node's default) and then blocks, so it
 * never accepts, and the kernel drops further SYNs once the queue is full. A connection to it
 * stays in the connecting state (SYN retransmits) until the client gives up.
 */
async function startSilentListener(): Promise<{ port: number; close(): Promise<void> }> {
  const gate = new Int32Array(new SharedArrayBuffer(4))
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads')
    const server = require('node:net').createServer()
    server.listen({ host: '127.0.0.1', port: 0, backlog: 1 }, () => {
      parentPort.postMessage(server.address().port)
      Atomics.wait(workerData, 0, 0)
      server.close()
    })`,
    { eval: true, workerData: gate },
  )
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  // Fill the accept queue: these connections complete and wait there; later ones stay unanswered.
  const fillers: Socket[] = []
  for (let i = 0; i < 4; i++) fillers.push(connect(port, '127.0.0.1').on('error', () => {}))
  await new Promise((resolve) => setTimeout(resolve, 100))
  return {
    port,
    async close() {
      for (const socket of fillers) socket.destroy()
      Atomics.store(gate, 0, 1)
      Atomics.notify(gate, 0)
      await worker.terminate()
    },
  }
}

test('an attempt whose connection never completes ends at the timeout, and the sender goes on working', async () => {
  const silent = await startSilentListener()
  const receiver = await startReceiver(() => ({ status: 200 }))
  const sender = createCallbackSender({ timeoutMs: 400, allowPrivate: true })
  try {
    const probe = connect(silent.port, '127.0.0.1')
    const probeConnected = await Promise.race([
      new Promise((resolve) => probe.once('connect', () => resolve(true))),
      new Promise((resolve) => setTimeout(() => resolve(false), 300)),
    ])
    probe.destroy()
    assert.equal(probeConnected, false, 'the listener leaves new connections hanging (the premise of this test)')

    const started = Date.now()
    const result = await sender.send(`http://127.0.0.1:${silent.port}/cb`, '{}', { 'content-type': 'application/json' })
    const elapsed = Date.now() - started
    assert.equal(result.statusCode, null)
    assert.ok(result.failure instanceof CallbackTimeoutError, 'a typed, retryable failure')
    assert.match(result.error ?? '', /timeout|TIMEOUT/i)
    assert.ok(elapsed >= 350 && elapsed < 2000, `ended after ${elapsed} ms, at the 400 ms timeout`)

    const next = await sender.send(`${receiver.url}/cb`, '{"n":1}', { 'content-type': 'application/json' })
    assert.equal(next.statusCode, 200, 'the hanging connection holds up nothing else')
    assert.equal(receiver.received.length, 1)
  } finally {
    sender.close()
    await receiver.close()
    await silent.close()
  }
})
