// The admin bodies read through field tables (src/admin/names.ts, shops.ts, grant-request.ts) answer the
// messages and paths they always have: a required name, a shop and an account id one message for every
// problem (the table's `problem`), the scopes their list messages, an expiry its own wording.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { readGrantBody } from '../../src/admin/grant-request.ts'
import { accountRequestFields, linkRequestFields, readOptionalName, readRequiredName } from '../../src/admin/names.ts'
import { readShopRequest } from '../../src/admin/shops.ts'

const refused = (path: string, message: string) => ({ ok: false, errors: [{ path, message }] })
const NAME_REQUIRED = refused('name', 'is required: a string of 1 to 200 characters')

test('a required name: trimmed, and one message whatever is wrong', () => {
  assert.deepEqual(readRequiredName({ name: ' Shop One ' }, accountRequestFields), { ok: true, value: { name: 'Shop One' } })
  for (const name of [undefined, null, '', '   ', 5, [], 'a'.repeat(201)]) {
    assert.deepEqual(readRequiredName({ name }, accountRequestFields), NAME_REQUIRED, JSON.stringify(name))
  }
})

test('an optional name: absent or blank is none; too long or not a string is refused', () => {
  assert.deepEqual(readOptionalName({}, linkRequestFields), { ok: true, value: { name: null } })
  assert.deepEqual(readOptionalName({ name: '  ' }, linkRequestFields), { ok: true, value: { name: null } })
  assert.deepEqual(readOptionalName({ name: ' Counter ' }, linkRequestFields), { ok: true, value: { name: 'Counter' } })
  for (const name of [5, true, {}, 'a'.repeat(201)]) {
    assert.deepEqual(readOptionalName({ name }, linkRequestFields), refused('name', 'must be a string of at most 200 characters'))
  }
})

test('a shop: a host name, lower-case without its trailing dot; anything else one message', () => {
  assert.deepEqual(readShopRequest({ shop: ' A.MyShopify.com. ' }), { ok: true, value: { shop: 'a.myshopify.com' } })
  for (const shop of [undefined, null, '', 'https://a.com', 'a b', 7]) {
    assert.deepEqual(
      readShopRequest({ shop }),
      refused('shop', 'is required: a host name such as "example.myshopify.com" (no scheme, no path)'),
    )
  }
})

test('a grant: every problem at once, in field order, with the messages it always had', () => {
  const now = new Date('2026-06-01T00:00:00Z')
  assert.deepEqual(
    readGrantBody({ account_id: 'a', scopes: ['payments.read', 'payments.read'], expires_at: '2026-06-01T00:00:00.001Z' }, now),
    {
      ok: true,
      value: { accountId: 'a', scopes: ['payments.read'], expiresAt: new Date('2026-06-01T00:00:00.001Z') },
    },
  )
  const accepted = 'payments.shopify.read, checkouts.shopify.read, payments.read'
  assert.deepEqual(readGrantBody({ account_id: 'x'.repeat(129), expires_at: 'soon' }, now), {
    ok: false,
    errors: [
      { path: 'account_id', message: 'is required: the id of the granting account' },
      { path: 'scopes', message: `must be a non-empty list of scopes: ${accepted}` },
      { path: 'expires_at', message: 'must be an ISO 8601 timestamp such as "2026-12-31T23:59:59Z"' },
    ],
  })
  assert.deepEqual(
    readGrantBody({ account_id: 'a', scopes: ['payments.write', 'payments.read'], expires_at: '2026-06-01T00:00:00Z' }, now),
    {
      ok: false,
      errors: [
        { path: 'scopes', message: `unknown scope "payments.write"; accepted: ${accepted}` },
        { path: 'expires_at', message: 'must lie in the future' },
      ],
    },
  )
})
