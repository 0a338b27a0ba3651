import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { FastifyReply } from 'fastify'
import pino from 'pino'
import { createShutdown } from '../../src/common/shutdown.ts'
import { decorateRecordOf, readinessOf, startSubsystems, type Subsystem } from '../../src/common/subsystem.ts'
import type { Tracking } from '../../src/domain/tracking.ts'

const logger = pino({ level: 'silent' })

/** A subsystem that writes its starts and stops to `log`; `failStart` makes its start throw. */
function recorded(name: string, log: string[], options: { failStart?: boolean; stop?: boolean } = {}): Subsystem {
  return {
    name,
    async start() {
      if (options.failStart) throw new Error(`${name} could not start`)
      log.push(`start ${name}`)
    },
    ...(options.stop === false ? {} : { stop: async () => void log.push(`stop ${name}`) }),
  }
}

test('subsystems start in list order and stop in reverse order on shutdown', async () => {
  const log: string[] = []
  const shutdown = createShutdown(logger)
  const routesOnly: Subsystem = { name: 'routes only', apiRoutes: [async () => {}] }
  await startSubsystems([recorded('a', log), routesOnly, recorded('b', log, { stop: false }), recorded('c', log)], shutdown, logger)
  assert.deepEqual(log, ['start a', 'start b', 'start c'])
  await shutdown.run()
  assert.deepEqual(log.slice(3), ['stop c', 'stop a'])
})

test('a start that fails leaves only the subsystems started before it to stop', async () => {
  const log: string[] = []
  const shutdown = createShutdown(logger)
  await assert.rejects(
    startSubsystems([recorded('a', log), recorded('b', log, { failStart: true }), recorded('c', log)], shutdown, logger),
    /b could not start/,
  )
  await shutdown.run()
  assert.deepEqual(log, ['start a', 'stop a'])
})

test('record decorators run in list order; readiness lists every chain of every subsystem', async () => {
  assert.equal(decorateRecordOf([{ name: 'none' }]), undefined)
  const headers: string[] = []
  const reply = { header: (name: string) => void headers.push(name) } as unknown as FastifyReply
  const decorate = decorateRecordOf([
    { name: 'first', decorateRecord: async (_t, _b, r) => void r.header('x-first', '1') },
    { name: 'plain' },
    { name: 'second', decorateRecord: async (_t, _b, r) => void r.header('x-second', '2') },
  ])
  await decorate!({} as Tracking, '{}', reply)
  assert.deepEqual(headers, ['x-first', 'x-second'])

  const readiness = await readinessOf([
    { name: 'one', readiness: async () => [{ name: 'ethereum', ok: true }] },
    { name: 'none' },
    { name: 'two', readiness: async () => [{ name: 'base', ok: false, error: 'down' }] },
  ])
  assert.deepEqual(
    readiness.map((chain) => chain.name),
    ['ethereum', 'base'],
  )
})
