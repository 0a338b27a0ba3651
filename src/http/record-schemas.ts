import { Type, type TSchema } from '@sinclair/typebox'
import { buildRecordExample, type RecordField, type RecordTable } from '../domain/record-table.ts'
import { CURRENT_RECORD, EARLIER_LINK_RECORD, EARLIER_RECORD, SUMMARY_RECORD } from '../domain/record-fields.ts'

/**
 * The JSON schemas of the payment records, made from the field tables that build the records
 * (src/domain/record-fields.ts): one schema per shape, shared as a component of /openapi.json
 * (src/http/openapi-components.ts). `additionalProperties: false`: a field the table sends is in the
 * schema, and the test that replays real answers against the document (test/http/openapi-answers.test.ts)
 * fails on any other.
 */

function kindSchema(field: RecordField): TSchema {
  const about = { description: field.presentWhen ? `${field.description} (${field.presentWhen.description})` : field.description }
  if (field.values) return Type.String({ enum: [...field.values], ...about })
  switch (field.kind) {
    case 'text':
    case 'json-text':
      return Type.String(about)
    case 'address':
      return Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', ...about })
    case 'hash':
      return Type.String({ pattern: '^0x[0-9a-fA-F]{64}$', ...about })
    case 'integer':
      return Type.Integer(about)
    case 'integer-text':
      return Type.String({ pattern: '^[0-9]+$', ...about })
    case 'decimal':
      return Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$', ...about })
    case 'boolean':
      return Type.Boolean(about)
    case 'timestamp':
      return Type.String({ format: 'date-time', ...about })
    case 'url':
      return Type.String({ format: 'uri', ...about })
    case 'object':
      return Type.Object({}, { additionalProperties: true, ...about })
  }
}

function fieldSchema(field: RecordField): TSchema {
  const schema = kindSchema(field)
  if (!field.nullable) return schema
  const { description, ...type } = schema
  return Type.Union([type as TSchema, Type.Null()], { description })
}

/** The object schema of a record table, with the table's example record. */
export function recordSchema(table: RecordTable, options: { $id: string; description: string }): TSchema {
  const properties = Object.fromEntries(
    Object.entries(table).map(([name, field]) => [name, field.presentWhen ? Type.Optional(fieldSchema(field)) : fieldSchema(field)]),
  )
  return Type.Object(properties, { ...options, additionalProperties: false, examples: [buildRecordExample(table)] })
}

export const currentRecordSchema = recordSchema(CURRENT_RECORD, {
  $id: 'PaymentRecord',
  description: 'Full payment tracking record, current shape (created with secret_id)',
})
export const earlierRecordSchema = recordSchema(EARLIER_RECORD, {
  $id: 'EarlierPaymentRecord',
  description: 'Full payment tracking record, earlier shape (created with uuid)',
})
export const summaryRecordSchema = recordSchema(SUMMARY_RECORD, {
  $id: 'PaymentSummary',
  description: 'Payment summary record (current shape, with x-api-version)',
})
export const earlierLinkRecordSchema = recordSchema(EARLIER_LINK_RECORD, {
  $id: 'EarlierLinkPayment',
  description: 'Earlier link payment record (without x-api-version)',
})
