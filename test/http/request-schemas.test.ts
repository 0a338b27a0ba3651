// One validation truth (src/domain/request-fields.ts): each request's parser reads through a field table and
// its OpenAPI schema is made from the same table. These tests fail when the two disagree: a field documented
// but not read or read but not documented, a type the schema allows but the parser refuses, a required field
// documented as optional; and when a route documents another table than its parser reads.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { FormatRegistry, type TObject } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { grantRequestFields, readGrantBody } from '../../src/admin/grant-request.ts'
import {
  accountRequestFields,
  appRequestFields,
  integrationRequestFields,
  linkRequestFields,
  readIntegrationRequest,
  readOptionalName,
  readRequiredName,
} from '../../src/admin/names.ts'
import {
  endpointRecoverRequestFields,
  endpointRequestFields,
  readEndpointRecoverRequest,
  readEndpointRequest,
} from '../../src/domain/endpoint-request.ts'
import { readShopRequest, shopRequestFields } from '../../src/admin/shops.ts'
import { parseIsoTimestamp } from '../../src/domain/iso-timestamp.ts'
import { linkPaymentsQueryFields, parseLinkPaymentsQuery } from '../../src/domain/link-payment.ts'
import { parsePaymentRequest, paymentRequestFields } from '../../src/domain/payment-request.ts'
import { parseReleaseRequest, releaseRequestFields } from '../../src/domain/release-request.ts'
import type { FieldTable, ParseResult } from '../../src/domain/request-fields.ts'
import { fieldsSchema } from '../../src/http/request-schemas.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { createBody, earlierBody, FEE_RECEIVER, SENDER, TX_HASH } from './payments-fixtures.ts'

FormatRegistry.Set('date-time', (value) => parseIsoTimestamp(value) !== undefined)

interface Case {
  name: string
  fields: FieldTable
  parse: (input: unknown) => ParseResult<unknown>
  /** A valid input with as many fields as can go together, and valid inputs with the others (the earlier form). */
  valid: () => Record<string, unknown>
  samples?: Record<string, () => Record<string, unknown>>
  /** Inputs that make conditional fields required. */
  variants: Record<string, unknown>[]
  /** More accepted values of another JSON type than the valid input's (a nonce as a string of digits). */
  alternates?: Record<string, unknown[]>
}

/** The admin routes hand their readers a JSON object (or `{}` for no body): src/http/routes/admin.ts `objectBody`. */
const asBody = (input: unknown) => input as Record<string, unknown>
const GRANTED_AT = new Date('2026-06-01T00:00:00Z')

const cases: Case[] = [
  {
    name: 'POST /v2/payments body',
    fields: paymentRequestFields,
    parse: parsePaymentRequest,
    valid: () =>
      createBody({
        payload: { order: 1 },
        commitment: 'confirmed',
        confirmations: 2,
        forward_on_failure: false,
        transaction: TX_HASH,
        deadline: 1_900_000_000,
        integration_id: 'int-1',
        link_id: 'link-1',
        forward_to: 'https://shop.example/done',
        fee_amount: '0.1',
        fee_receiver: FEE_RECEIVER,
        shop: 'a.myshopify.com',
        shopify_payment_id: 'sp-1',
      }),
    samples: { uuid: () => earlierBody() },
    variants: [{}, { uuid: 'u-1' }, { uuid: 'u-1', commitment: 'finalized' }, { fee_amount: '1' }, { shop: 'a.myshopify.com' }],
    alternates: { nonce: ['7'], after_block: ['12'], deadline: ['1900000000'] },
  },
  {
    name: 'POST /v2/payments/release body',
    fields: releaseRequestFields,
    parse: parseReleaseRequest,
    valid: () => ({ blockchain: 'ethereum', transaction: TX_HASH, sender: SENDER, nonce: '7', secret_id: 's-1' }),
    samples: { uuid: () => ({ blockchain: 'ethereum', transaction: TX_HASH, sender: SENDER, nonce: 7, uuid: 'u-1' }) },
    variants: [{}, { uuid: 'u-1' }],
    alternates: { nonce: [7] },
  },
  {
    name: 'GET /links/{link_id}/payments query',
    fields: linkPaymentsQueryFields,
    parse: parseLinkPaymentsQuery,
    valid: () => ({ after: '2026-01-01T12:00:00.000Z' }),
    variants: [{}],
  },
  {
    name: 'POST /admin/accounts body',
    fields: accountRequestFields,
    parse: (input) => readRequiredName(asBody(input), accountRequestFields),
    valid: () => ({ name: ' Shop One ' }),
    variants: [{}],
  },
  {
    name: 'POST /admin/accounts/{id}/apps body',
    fields: appRequestFields,
    parse: (input) => readRequiredName(asBody(input), appRequestFields),
    valid: () => ({ name: 'Reports' }),
    variants: [{}],
  },
  {
    name: 'POST /admin/accounts/{id}/links body',
    fields: linkRequestFields,
    parse: (input) => readOptionalName(asBody(input), linkRequestFields),
    valid: () => ({ name: 'Counter 1' }),
    variants: [{}],
  },
  {
    name: 'POST /admin/accounts/{id}/integrations body',
    fields: integrationRequestFields,
    parse: (input) => readIntegrationRequest(asBody(input)),
    valid: () => ({ name: 'Shop backend', reversal_events: true }),
    variants: [{}],
  },
  {
    name: 'POST /v2/endpoints/enable and /test body',
    fields: endpointRequestFields,
    parse: (input) => readEndpointRequest(asBody(input)),
    valid: () => ({ url: 'https://shop.example/hook' }),
    variants: [],
  },
  {
    name: 'POST /v2/endpoints/recover body',
    fields: endpointRecoverRequestFields,
    parse: (input) => readEndpointRecoverRequest(asBody(input)),
    valid: () => ({ url: 'https://shop.example', since: '2026-01-01T00:00:00.000Z' }),
    variants: [],
  },
  {
    name: 'POST /admin/accounts/{id}/shops body',
    fields: shopRequestFields,
    parse: (input) => readShopRequest(asBody(input)),
    valid: () => ({ shop: 'Example.myshopify.com' }),
    variants: [{}],
  },
  {
    name: 'POST /admin/apps/{id}/grants body',
    fields: grantRequestFields,
    parse: (input) => readGrantBody(asBody(input), GRANTED_AT),
    valid: () => ({ account_id: 'acc-1', scopes: ['payments.read', 'checkouts.shopify.read'], expires_at: '2027-01-01T00:00:00Z' }),
    variants: [{}],
  },
]

/** The top-level keys the parser looks at. */
function keysRead(parse: Case['parse'], input: Record<string, unknown>): Set<string> {
  const read = new Set<string>()
  parse(
    new Proxy(input, {
      get(target, key, receiver) {
        if (typeof key === 'string') read.add(key)
        return Reflect.get(target, key, receiver)
      },
    }),
  )
  return read
}

const errorsAt = (result: ParseResult<unknown>, path: string) => (result.ok ? [] : result.errors.filter((e) => e.path === path))
const PROBES: unknown[] = [true, 7, -1, 1.5, 'x', {}, [], '2026-01-01T00:00:00Z']
const jsonType = (v: unknown): string =>
  Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v

for (const c of cases) {
  describe(`${c.name}: the schema and the parser agree`, () => {
    const schema: TObject = fieldsSchema(c.fields)
    const documented = Object.keys(schema.properties).sort()

    test('every field the parser reads is documented, and every documented field is read', () => {
      const read = new Set<string>()
      for (const input of [c.valid(), ...c.variants]) for (const key of keysRead(c.parse, input)) read.add(key)
      assert.deepEqual([...read].sort(), documented)
    })

    const baseFor = (key: string) => (key in c.valid() ? c.valid() : c.samples?.[key]?.()) ?? c.valid()

    test('valid inputs pass both, and together they hold every field', () => {
      for (const input of [c.valid(), ...Object.values(c.samples ?? {}).map((sample) => sample())]) {
        const parsed = c.parse(input)
        assert.ok(parsed.ok, parsed.ok ? '' : JSON.stringify(parsed.errors))
        assert.ok(Value.Check(schema, input), JSON.stringify([...Value.Errors(schema, input)]))
      }
      for (const key of documented) assert.ok(key in baseFor(key), `a valid input holds ${key}`)
    })

    test('a value the schema refuses the parser refuses at the same path; one the parser takes the schema takes', () => {
      for (const key of documented) {
        for (const probe of PROBES) {
          const input = { ...baseFor(key), [key]: probe }
          const schemaTakes = Value.Check(schema, input)
          const parserTakes = errorsAt(c.parse(input), key).length === 0
          if (!schemaTakes) assert.ok(!parserTakes, `${key} = ${JSON.stringify(probe)}: the schema refuses it, the parser takes it`)
          if (parserTakes) assert.ok(schemaTakes, `${key} = ${JSON.stringify(probe)}: the parser takes it, the schema refuses it`)
        }
      }
    })

    test('the schema admits no JSON type the parser never takes', () => {
      for (const key of documented) {
        const base = baseFor(key)
        const [schemaTypes, parserTypes] = [new Set<string>(), new Set<string>()]
        for (const value of [base[key], ...PROBES, ...(c.alternates?.[key] ?? [])]) {
          const input = { ...base, [key]: value }
          if (Value.Check(schema, input)) schemaTypes.add(jsonType(value))
          if (errorsAt(c.parse(input), key).length === 0) parserTypes.add(jsonType(value))
        }
        assert.deepEqual([...schemaTypes].sort(), [...parserTypes].sort(), `${key}: JSON types of the schema and of the parser`)
      }
    })

    test('required fields are required by both; fields the parser may require are documented as such', () => {
      const required = new Set(schema.required ?? [])
      for (const [key, field] of Object.entries(c.fields)) {
        const without = c.valid()
        delete without[key]
        // Refused at its path: `is required`, the table's one `problem` message, or a list's own message.
        const missing = errorsAt(c.parse(without), key).length > 0
        if (field.required === true) {
          assert.ok(required.has(key), `${key} is required in the schema`)
          assert.ok(missing, `${key} is required by the parser`)
        } else {
          assert.ok(!required.has(key), `${key} is optional in the schema`)
        }
      }
      for (const input of [c.valid(), ...c.variants]) {
        const result = c.parse(input)
        for (const error of result.ok ? [] : result.errors) {
          if (!error.message.startsWith('is required')) continue
          assert.ok(c.fields[error.path]?.required, `${error.path} may be required: the table says when`)
        }
      }
    })
  })
}

describe('/openapi.json documents the tables the routes parse with', () => {
  let service: TestService
  before(async () => {
    service = await startTestService({ background: false })
  })
  after(async () => {
    await service?.close()
  })

  test('request bodies and query parameters name exactly the fields of their tables', async () => {
    type Operation = {
      requestBody?: { content: Record<string, { schema: { properties: Record<string, unknown> } }> }
      parameters?: { in: string; name: string }[]
    }
    const doc = (await service.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, Operation>>
    }>()
    const bodyOf = (path: string) => Object.keys(doc.paths[path]!.post!.requestBody!.content['application/json']!.schema.properties).sort()
    assert.deepEqual(bodyOf('/v2/payments'), Object.keys(paymentRequestFields).sort())
    assert.deepEqual(bodyOf('/v2/payments/release'), Object.keys(releaseRequestFields).sort())
    const query = doc.paths['/links/{link_id}/payments']!.get!.parameters!.filter((p) => p.in === 'query').map((p) => p.name)
    assert.deepEqual(query.sort(), Object.keys(linkPaymentsQueryFields).sort())
    assert.deepEqual(bodyOf('/admin/accounts'), Object.keys(accountRequestFields).sort())
    assert.deepEqual(bodyOf('/admin/accounts/{id}/apps'), Object.keys(appRequestFields).sort())
    assert.deepEqual(bodyOf('/admin/accounts/{id}/links'), Object.keys(linkRequestFields).sort())
    assert.deepEqual(bodyOf('/admin/accounts/{id}/integrations'), Object.keys(integrationRequestFields).sort())
    assert.deepEqual(bodyOf('/admin/accounts/{id}/shops'), Object.keys(shopRequestFields).sort())
    assert.deepEqual(bodyOf('/v2/endpoints/enable'), Object.keys(endpointRequestFields).sort())
    assert.deepEqual(bodyOf('/v2/endpoints/test'), Object.keys(endpointRequestFields).sort())
    assert.deepEqual(bodyOf('/v2/endpoints/recover'), Object.keys(endpointRecoverRequestFields).sort())
    assert.deepEqual(bodyOf('/admin/accounts/{id}/endpoints/recover'), Object.keys(endpointRecoverRequestFields).sort())
    assert.deepEqual(bodyOf('/admin/apps/{id}/grants'), Object.keys(grantRequestFields).sort())
  })
})
