import { isAddress } from 'viem'
import { AmountError, canonicalDecimal } from './amount.ts'
import { type FieldError, FieldErrors } from './field-errors.ts'
import { forwardTargetProblem } from './forward-target.ts'
import { parseIsoTimestamp } from './iso-timestamp.ts'
import { normalizeShopHost, SHOP_HOST_HINT } from './shop-host.ts'

/**
 * One validation truth for request input (docs/api.md §3, §6). A request's fields are described once, in a
 * field table (`paymentRequestFields`, `releaseRequestFields`, `linkPaymentsQueryFields`, and the admin
 * bodies' tables in src/admin/: names.ts, shops.ts, grant-request.ts); the hand-written
 * parser reads its input only through that table (a `FieldReader` method per kind, keys checked against the
 * table), and the OpenAPI schema is generated from the same table (src/http/request-schemas.ts). Why the
 * parsers and not Ajv are the truth: Fastify's own validation stays off on these
 * routes: the parsers report every field problem at once, with the messages and `errors[].path` clients
 * rely on, which Ajv's messages cannot reproduce. test/http/request-schemas.test.ts fails when a field is
 * documented but not read, read but not documented, or documented with a type the parser refuses.
 */

const MAX_UINT64 = 2n ** 64n - 1n
export const MAX_URL_LENGTH = 2048
export const MAX_PAYLOAD_BYTES = 8 * 1024

interface FieldBase {
  description?: string
  /** A value documented as this field's example (/openapi.json); kinds other than text have a default one. */
  example?: unknown
  /** `true`: always required; a text: required only then (documented, checked by the parser). */
  required?: true | string
  /**
   * null is a value of its own, not absence: a required field may be sent as null (the record it names has
   * none). Documented as nullable; the reader answers null for it without a problem.
   */
  nullable?: true
  /**
   * One message for every problem with the field, absence included when it is required: the admin bodies
   * have always answered so (`is required: a string of 1 to 200 characters`), and their messages are kept.
   */
  problem?: string
}

export type RequestField = FieldBase &
  (
    | { kind: 'text'; pattern: RegExp; hint: string }
    | { kind: 'address' }
    /** `max`: a value answered as a JSON number stays one that every JSON reader holds exactly (default: 2^64 − 1). */
    | { kind: 'uint'; max?: bigint }
    | { kind: 'integer'; min: number; max: number }
    | { kind: 'decimal' }
    | { kind: 'url' }
    | { kind: 'forward-url' }
    | { kind: 'choice'; values: readonly string[] }
    | { kind: 'boolean' }
    | { kind: 'object' }
    | { kind: 'timestamp' }
    /** A name for people: at most `max` characters, stored trimmed; blank is none (refused when required). */
    | { kind: 'name'; max: number }
    /** A connected shop's host name (src/domain/shop-host.ts), stored lower-case. */
    | { kind: 'shop-host' }
    /** A non-empty list of some of `values`, kept as given without repeats; `item` names one in messages. */
    | { kind: 'list'; values: readonly string[]; item: string }
  )

export type FieldTable = Record<string, RequestField>
export type ParseResult<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] }

type FieldOfKind<K extends RequestField['kind']> = Extract<RequestField, { kind: K }>
/** The keys of a table whose fields are of one kind: a parser reads each field with the reader of its kind. */
type KeysOf<F extends FieldTable, K extends RequestField['kind']> = { [P in keyof F]: F[P] extends { kind: K } ? P : never }[keyof F] &
  string

/**
 * Reads the fields of one table from a JSON object: each read records an error and returns null instead of
 * throwing, so that every problem is reported at once. null counts as absent, as for every optional field,
 * except in a `nullable` field, where it is the value.
 * One method per kind, so that each call site of a parser stays monomorphic (the create path runs it per request).
 */
export class FieldReader<F extends FieldTable> {
  private readonly body: Record<string, unknown>
  private readonly errors: FieldErrors
  private readonly fields: F
  constructor(body: Record<string, unknown>, errors: FieldErrors, fields: F) {
    this.body = body
    this.errors = errors
    this.fields = fields
  }

  /** The raw value of a field the table lists, for rules across fields. */
  raw(key: keyof F & string): unknown {
    return this.body[key]
  }

  /** The value, or undefined when absent; `required` overrides the table's for conditional fields. */
  private present(key: string, required: boolean | undefined): unknown {
    const v = this.body[key]
    if (v === null && this.fields[key]!.nullable) return undefined
    if (v === undefined || v === null) {
      if (required ?? this.fields[key]!.required === true) this.errors.add(key, this.fields[key]!.problem ?? 'is required')
      return undefined
    }
    return v
  }

  private field<K extends RequestField['kind']>(key: string): FieldOfKind<K> {
    return this.fields[key] as FieldOfKind<K>
  }

  text(key: KeysOf<F, 'text'>, required?: boolean): string | null {
    const v = this.present(key, required)
    if (v === undefined) return null
    const { pattern, hint } = this.field<'text'>(key)
    if (typeof v !== 'string') return this.fail(key, `must be a string: ${hint}`)
    if (!pattern.test(v)) return this.fail(key, `must be ${hint}`)
    return v
  }

  address(key: KeysOf<F, 'address'>, required?: boolean): string | null {
    const v = this.present(key, required)
    if (v === undefined) return null
    if (typeof v !== 'string' || !isAddress(v, { strict: false })) return this.fail(key, 'must be a 0x-prefixed 20-byte address')
    return v.toLowerCase()
  }

  uint(key: KeysOf<F, 'uint'>, required?: boolean): bigint | null {
    const v = this.present(key, required)
    if (v === undefined) return null
    let n: bigint | null = null
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) n = BigInt(v)
    else if (typeof v === 'string' && /^\d{1,20}$/.test(v)) n = BigInt(v)
    const max = this.field<'uint'>(key).max
    if (n === null || n > (max ?? MAX_UINT64)) {
      return this.fail(key, `must be a non-negative integer${max === undefined ? '' : ` up to ${max}`}, as a number or a string of digits`)
    }
    return n
  }

  integer(key: KeysOf<F, 'integer'>, required?: boolean): number | null {
    const v = this.present(key, required)
    if (v === undefined) return null
    const { min, max } = this.field<'integer'>(key)
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
      return this.fail(key, `must be an integer from ${min} to ${max}`)
    return v
  }

  decimal(key: KeysOf<F, 'decimal'>, required?: boolean): string | null {
    const v = this.present(key, required)
    if (v === undefined) return null
    if (typeof v !== 'string') return this.fail(key, 'must be a decimal string such as "1.5" (a string avoids rounding)')
    if (v.length > 100) return this.fail(key, 'is too long')
    try {
      return canonicalDecimal(v)
    } catch (error) {
      return this.fail(key, (error as AmountError).message)
    }
  }

  url(key: KeysOf<F, 'url'>, required?: boolean): string | null {
    const v = this.present(key, required)
    if (v === undefined) return null
    if (typeof v !== 'string' || v.length > MAX_URL_LENGTH)
      return this.fail(key, `must be an http(s) URL of at most ${MAX_URL_LENGTH} characters`)
    let url: URL
    try {
      url = new URL(v)
    } catch {
      return this.fail(key, 'must be an absolute http(s) URL')
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return this.fail(key, 'must use http or https')
    return v
  }

  /** The same rule as a callback answer's `forward_to`, but only absolute URLs: there is no page yet to be relative to. */
  forwardUrl(key: KeysOf<F, 'forward-url'>): string | null {
    const v = this.present(key, false)
    if (v === undefined) return null
    const problem = forwardTargetProblem(v, { paths: false })
    return problem ? this.fail(key, problem) : (v as string)
  }

  choice(key: KeysOf<F, 'choice'>): string | null {
    const v = this.present(key, false)
    if (v === undefined) return null
    const { values } = this.field<'choice'>(key)
    if (typeof v !== 'string' || !values.includes(v)) return this.fail(key, `must be one of ${values.map((a) => `"${a}"`).join(', ')}`)
    return v
  }

  boolean(key: KeysOf<F, 'boolean'>): boolean | null {
    const v = this.present(key, false)
    if (v === undefined) return null
    if (typeof v !== 'boolean') return this.fail(key, 'must be true or false')
    return v
  }

  object(key: KeysOf<F, 'object'>): Record<string, unknown> | null {
    const v = this.present(key, false)
    if (v === undefined) return null
    if (typeof v !== 'object' || Array.isArray(v)) return this.fail(key, 'must be a JSON object')
    let size: number
    try {
      size = Buffer.byteLength(JSON.stringify(v))
    } catch {
      return this.fail(key, 'must be serializable JSON') // e.g. nested too deep to serialize
    }
    if (size > MAX_PAYLOAD_BYTES) return this.fail(key, `must be at most ${MAX_PAYLOAD_BYTES} bytes serialized`)
    return v as Record<string, unknown>
  }

  timestamp(key: KeysOf<F, 'timestamp'>): Date | null {
    const v = this.present(key, false)
    if (v === undefined) return null
    const parsed = typeof v === 'string' && v.length <= 64 ? parseIsoTimestamp(v) : undefined
    return parsed ?? this.fail(key, 'must be one ISO 8601 timestamp such as "2026-01-01T12:00:00.000Z"')
  }

  name(key: KeysOf<F, 'name'>): string | null {
    const v = this.present(key, undefined)
    if (v === undefined) return null
    const { max, required } = this.field<'name'>(key)
    if (typeof v !== 'string' || v.length > max) return this.fail(key, `must be a string of at most ${max} characters`)
    const name = v.trim()
    if (name === '' && required === true) return this.fail(key, 'is required')
    return name || null
  }

  shopHost(key: KeysOf<F, 'shop-host'>): string | null {
    const v = this.present(key, undefined)
    if (v === undefined) return null
    return normalizeShopHost(v) ?? this.fail(key, `must be ${SHOP_HOST_HINT}`)
  }

  /** An absent list is the empty one: a required list is refused with the list's own message, not `is required`. */
  list(key: KeysOf<F, 'list'>): string[] | null {
    const v = this.present(key, false)
    const { values, item, required } = this.field<'list'>(key)
    if (v === undefined && required !== true) return null
    if (!Array.isArray(v) || v.length === 0 || v.some((s) => typeof s !== 'string')) {
      return this.fail(key, `must be a non-empty list of ${item}s: ${values.join(', ')}`)
    }
    const unknown = (v as string[]).filter((s) => !values.includes(s))
    if (unknown.length > 0) {
      return this.fail(
        key,
        `unknown ${item} ${unknown.map((s) => JSON.stringify(s.slice(0, 60))).join(', ')}; accepted: ${values.join(', ')}`,
      )
    }
    return [...new Set(v as string[])]
  }

  private fail(key: string, message: string): null {
    this.errors.add(key, this.fields[key]!.problem ?? message)
    return null
  }
}

/** Reads one table's fields from a JSON object with `read`; every problem is reported at once. */
export function readFields<F extends FieldTable, T>(
  body: Record<string, unknown>,
  fields: F,
  read: (reader: FieldReader<F>, errors: FieldErrors) => T,
): ParseResult<T> {
  const errors = new FieldErrors()
  const value = read(new FieldReader(body, errors, fields), errors)
  return errors.empty ? { ok: true, value } : { ok: false, errors: errors.list }
}

/**
 * Which field names the secret: `uuid` (the earlier form) when only it is given, else `secret_id`.
 * null counts as absent: `{"secret_id": "…", "uuid": null}` is the current form.
 */
export function secretKeyOf<F extends FieldTable & { secret_id: RequestField; uuid: RequestField }>(
  read: FieldReader<F>,
  errors: FieldErrors,
): 'secret_id' | 'uuid' {
  const given = (key: 'secret_id' | 'uuid') => read.raw(key) !== undefined && read.raw(key) !== null
  if (given('secret_id') && given('uuid')) errors.add('uuid', 'cannot be sent with secret_id: send one of them (uuid is the earlier form)')
  return !given('secret_id') && given('uuid') ? 'uuid' : 'secret_id'
}
