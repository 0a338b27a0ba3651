import type { Tracking } from './tracking.ts'

/**
 * What a record field table is (src/domain/record-fields.ts holds the tables) and the two things made from
 * one besides its schema: the record of a tracking, and the documented example.
 */

export type RecordFieldKind =
  /** Free text. */
  | 'text'
  /** An EIP-55 checksummed 0x address. */
  | 'address'
  /** A 0x-prefixed 32-byte transaction hash. */
  | 'hash'
  /** A JSON integer (exact: beyond 2^53 its digits are written as they are). */
  | 'integer'
  /** An integer as a string of digits. */
  | 'integer-text'
  /** A canonical decimal string. */
  | 'decimal'
  | 'boolean'
  /** An ISO 8601 UTC timestamp. */
  | 'timestamp'
  /** An absolute http(s) URL. */
  | 'url'
  /** Free JSON object data. */
  | 'object'
  /** A JSON object serialized as a string. */
  | 'json-text'

export interface RecordField {
  kind: RecordFieldKind
  /** The one value this field may take besides its kind (an enum), when given. */
  values?: readonly string[]
  nullable?: boolean
  /** Present only when this holds; without it the field is always present (and required in the schema). */
  presentWhen?: { test: (t: Tracking) => boolean; description: string }
  description: string
  example: unknown
  value: (t: Tracking) => unknown
}

export type RecordTable = Readonly<Record<string, RecordField>>

type Builder = (t: Tracking) => Record<string, unknown>
const builders = new WeakMap<RecordTable, Builder>()

/**
 * A table's record builder, made once per table as straight-line code (named property stores in the table's
 * order): a loop of keyed stores over the table built each record about twice as slowly, and records are
 * built per request and per callback.
 */
function compile(table: RecordTable): Builder {
  const fields = Object.entries(table)
  const lines = fields.map(([name, field], i) => {
    const store = `r[${JSON.stringify(name)}] = f[${i}].value(t)`
    return field.presentWhen ? `if (f[${i}].presentWhen.test(t)) ${store}` : store
  })
  const make = new Function('f', `return function record(t) { const r = {}; ${lines.join('; ')}; return r }`)
  return make(fields.map(([, field]) => field)) as Builder
}

/** The record of a tracking by a table, fields in the table's order. */
export function buildRecord(table: RecordTable, t: Tracking): Record<string, unknown> {
  let build = builders.get(table)
  if (!build) builders.set(table, (build = compile(table)))
  return build(t)
}

/** The record the table's examples make (fields present only sometimes left out): the documented example. */
export function buildRecordExample(table: RecordTable): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(table)
      .filter(([, field]) => !field.presentWhen)
      .map(([name, field]) => [name, field.example]),
  )
}
