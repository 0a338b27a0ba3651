import assert from 'node:assert/strict'
import { test } from 'node:test'
import { grantsScope, parseScopes } from '../../src/domain/app-scopes.ts'
import { parseIsoTimestamp } from '../../src/domain/iso-timestamp.ts'
import { normalizeShopHost } from '../../src/domain/shop-host.ts'

const iso = (text: string) => parseIsoTimestamp(text)?.toISOString()

test('ISO 8601 timestamps: the forms clients send', () => {
  assert.equal(iso('2026-03-01T10:00:00.123Z'), '2026-03-01T10:00:00.123Z')
  assert.equal(iso('2026-03-01T10:00:00.123456789Z'), '2026-03-01T10:00:00.123Z', 'digits beyond milliseconds are cut off')
  assert.equal(iso('2026-03-01T10:00:00Z'), '2026-03-01T10:00:00.000Z')
  assert.equal(iso('2026-03-01T10:00Z'), '2026-03-01T10:00:00.000Z')
  assert.equal(iso('2026-03-01T12:00:00+02:00'), '2026-03-01T10:00:00.000Z')
  assert.equal(iso('2026-03-01T12:00:00+0200'), '2026-03-01T10:00:00.000Z')
  assert.equal(iso('2026-03-01T05:30:00-04:30'), '2026-03-01T10:00:00.000Z')
  assert.equal(iso('2026-03-01T12:00:00 02:00'), '2026-03-01T10:00:00.000Z', 'an unencoded + read as a space')
  assert.equal(iso('2026-03-01 10:00:00'), '2026-03-01T10:00:00.000Z', 'no offset: UTC')
  assert.equal(iso('2026-03-01'), '2026-03-01T00:00:00.000Z')
  assert.equal(iso('2024-02-29T00:00:00Z'), '2024-02-29T00:00:00.000Z')
  assert.equal(iso('2026-03-01T24:00:00Z'), '2026-03-02T00:00:00.000Z')
  assert.equal(iso('0050-01-01T00:00:00Z'), '0050-01-01T00:00:00.000Z', 'years below 100 stay themselves')
})

test('ISO 8601 timestamps: anything else is refused', () => {
  for (const bad of [
    '',
    'now',
    '1700000000',
    '2026-3-1',
    '2026-03-01T10',
    '2026-13-01',
    '2026-00-10',
    '2026-02-29',
    '2026-04-31',
    '2026-03-01T24:00:01Z',
    '2026-03-01T10:60:00Z',
    '2026-03-01T10:00:61Z',
    '2026-03-01T10:00:00+24:00',
    '2026-03-01T10:00:00Z junk',
    ' 2026-03-01',
    '2026-03-01T10:00:00.Z',
    '+002026-03-01',
  ]) {
    assert.equal(parseIsoTimestamp(bad), undefined, JSON.stringify(bad))
  }
})

test('scopes: known names, payments.read as a synonym', () => {
  assert.deepEqual(parseScopes(['payments.read', 'payments.read', 'checkouts.shopify.read']), {
    ok: true,
    scopes: ['payments.read', 'checkouts.shopify.read'],
  })
  for (const bad of [[], 'payments.read', ['payments.write'], [1], null]) assert.equal(parseScopes(bad).ok, false, JSON.stringify(bad))
  assert.equal(grantsScope(['payments.read'], 'payments.shopify.read'), true)
  assert.equal(grantsScope(['payments.shopify.read'], 'payments.shopify.read'), true)
  assert.equal(grantsScope(['payments.read'], 'checkouts.shopify.read'), false)
  assert.equal(grantsScope([], 'checkouts.shopify.read'), false)
})

test('shop host names', () => {
  assert.equal(normalizeShopHost('My-Shop.myshopify.com.'), 'my-shop.myshopify.com')
  assert.equal(normalizeShopHost('localhost'), 'localhost')
  for (const bad of ['', 'https://a.com', 'a.com/x', 'a..com', '-a.com', 'a-.com', 'a b.com', 'a.com:443', `${'a'.repeat(64)}.com`, 5]) {
    assert.equal(normalizeShopHost(bad), undefined, JSON.stringify(bad))
  }
})
