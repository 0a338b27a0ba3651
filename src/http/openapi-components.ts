import { Type, type TSchema } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { buildRecordExample } from '../domain/record-table.ts'
import { CURRENT_RECORD } from '../domain/record-fields.ts'
import { componentRef, problemComponent } from './problem-schemas.ts'
import { currentRecordSchema, earlierLinkRecordSchema, earlierRecordSchema, summaryRecordSchema } from './record-schemas.ts'

/**
 * The shared `components` of /openapi.json: each body the API and its callbacks send is described once
 * here and referred to (`$ref`) wherever it is answered or sent. Added to the Fastify instance with
 * addSchema(), so routes refer to them by id (`componentRef('PaymentRecord')`) and @fastify/swagger
 * emits them under `components/schemas` by that id.
 */

/** Either full record: a tracking answers and calls back in the shape it was created with. */
export const anyPaymentRecord = Type.Unsafe({
  anyOf: [componentRef('PaymentRecord'), componentRef('EarlierPaymentRecord')],
  description: 'the full record, in the shape the tracking was created with (secret_id: current; uuid: earlier)',
})

const reversalEventSchema = Type.Object(
  {
    event: Type.String({ enum: ['payment.reverted', 'payment.reconfirmed'] }),
    payment: anyPaymentRecord,
  },
  {
    $id: 'ReversalEvent',
    additionalProperties: false,
    description: "A succeeded payment's transaction left the canonical chain (payment.reverted) or was mined again (payment.reconfirmed)",
    examples: [{ event: 'payment.reverted', payment: { ...buildRecordExample(CURRENT_RECORD), reverted_at: '2026-01-15T10:25:07.000Z' } }],
  },
)

const testEventSchema = Type.Object(
  { event: Type.String({ enum: ['test'] }), sent_at: Type.String({ format: 'date-time' }) },
  {
    $id: 'TestEvent',
    additionalProperties: false,
    description: 'Sent by POST /v2/endpoints/test',
    examples: [{ event: 'test', sent_at: '2026-01-15T10:24:31.000Z' }],
  },
)

const COMPONENTS: readonly TSchema[] = [
  problemComponent,
  currentRecordSchema,
  earlierRecordSchema,
  summaryRecordSchema,
  earlierLinkRecordSchema,
  reversalEventSchema,
  testEventSchema,
]

export function addComponents(app: FastifyInstance): void {
  for (const schema of COMPONENTS) app.addSchema(schema)
}

/** Every component by its id (tests validate bodies against them). */
export const componentSchemas = (): readonly TSchema[] => COMPONENTS

/** @fastify/swagger names a shared schema by its `$id` (its default is `def-N`). */
export const componentNames = {
  buildLocalReference: (json: { $id?: unknown }, _baseUri: unknown, _fragment: unknown, i: number): string =>
    typeof json.$id === 'string' ? json.$id : `def-${i}`,
}
