import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import type { FieldTable, RequestField } from '../domain/request-fields.ts'
import { SHOP_HOST_HINT } from '../domain/shop-host.ts'

/**
 * The OpenAPI schemas of request bodies and queries, generated from the field tables their parsers read
 * through (src/domain/request-fields.ts). The parsers are the one validation truth: they report every
 * field problem at once with the messages and `errors[].path` of docs/api.md §6, which Fastify's Ajv
 * validation cannot give. So Ajv stays off on these routes (`readByHand`), and the schema, made from the
 * parser's own table, cannot document a field the parser does not read, or leave out one it does.
 */

/** Fastify's validation off: the route's parser reads the input and answers the problems. */
export const readByHand = () => () => true

function describe(field: RequestField, fallback: string): { description: string } {
  const text = field.description ?? fallback
  return { description: typeof field.required === 'string' ? `${text}; required ${field.required}` : text }
}

function fieldSchema(field: RequestField): TSchema {
  const schema = kindSchema(field)
  if (!field.nullable) return schema
  const { description, ...type } = schema
  return Type.Union([type as TSchema, Type.Null()], { description })
}

function kindSchema(field: RequestField): TSchema {
  switch (field.kind) {
    case 'text':
      return Type.String(describe(field, field.hint))
    case 'address':
      return Type.String(describe(field, 'a 0x-prefixed 20-byte address'))
    case 'uint':
      return Type.Union(
        [Type.String(), Type.Integer(field.max === undefined ? {} : { maximum: Number(field.max) })],
        describe(field, 'a non-negative integer, as a number or a string of digits'),
      )
    case 'integer':
      return Type.Integer({ minimum: field.min, maximum: field.max, ...describe(field, `an integer from ${field.min} to ${field.max}`) })
    case 'decimal':
      return Type.String(describe(field, 'a decimal string such as "1.5"'))
    case 'url':
      return Type.String(describe(field, 'an absolute http(s) URL'))
    case 'forward-url':
      return Type.String(describe(field, 'an absolute http(s) URL the payer is sent to'))
    case 'choice':
      return Type.Union(
        field.values.map((value) => Type.Literal(value)),
        field.description ? describe(field, '') : {},
      )
    case 'boolean':
      return Type.Boolean(field.description ? describe(field, '') : {})
    case 'object':
      return Type.Object({}, { additionalProperties: true, ...describe(field, 'a JSON object') })
    case 'timestamp':
      return Type.String({ format: 'date-time', ...describe(field, 'an ISO 8601 timestamp') })
    case 'name':
      return Type.String({
        ...(field.required === true ? { minLength: 1 } : {}),
        maxLength: field.max,
        ...describe(field, `up to ${field.max} characters`),
      })
    case 'shop-host':
      return Type.String(describe(field, SHOP_HOST_HINT))
    case 'list':
      return Type.Array(Type.Union(field.values.map((value) => Type.Literal(value))), {
        minItems: 1,
        ...describe(field, `${field.item}s, at least one`),
      })
  }
}

/** A value of the field's kind, for the example body (/docs "Try it out" sends it as it is). */
function exampleOf(field: RequestField): unknown {
  if (field.example !== undefined) return field.example
  switch (field.kind) {
    case 'text':
      return undefined
    case 'address':
      return '0x4675C7e5BaAFBFFbca748158bEcBA61ef3b0a263'
    case 'uint':
      return '1'
    case 'integer':
      return field.min
    case 'decimal':
      return '1.5'
    case 'url':
      return 'https://shop.example/paywatch/callback'
    case 'forward-url':
      return 'https://shop.example/thanks'
    case 'choice':
      return field.values[0]
    case 'boolean':
      return true
    case 'object':
      return {}
    case 'timestamp':
      return '2026-01-15T10:24:31.000Z'
    case 'name':
      return 'Example'
    case 'shop-host':
      return 'example-shop.myshopify.com'
    case 'list':
      return [field.values[0]]
  }
}

/**
 * The object schema of a field table: `required: true` fields are required, the others optional. Its example
 * is the one given, or the table's required fields (and those with an example of their own), each with its example.
 */
export function fieldsSchema(fields: FieldTable, example?: Record<string, unknown>): TObject {
  const made = Object.fromEntries(
    Object.entries(fields)
      .filter(([, field]) => field.required === true || field.example !== undefined)
      .map(([key, field]) => [key, exampleOf(field)])
      .filter(([, value]) => value !== undefined),
  )
  return Type.Object(
    Object.fromEntries(
      Object.entries(fields).map(([key, field]) => [key, field.required === true ? fieldSchema(field) : Type.Optional(fieldSchema(field))]),
    ),
    { examples: [example ?? made] },
  )
}
