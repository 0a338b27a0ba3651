// seal/open: private keys at rest under PAYWATCH_SECRETS_KEY (AES-256-GCM, versioned text).
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { isSealed, open, seal, SealedSecretError } from '../../src/store/sealed-secret.ts'

const key = randomBytes(32)
const pem = '-----BEGIN PRIVATE KEY-----\nMIIE…\n-----END PRIVATE KEY-----\n'

test('a sealed value is versioned text without the plaintext, and opens to it again', () => {
  const stored = seal(pem, key)
  assert.match(stored, /^pwenc:v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/)
  assert.equal(stored.includes('PRIVATE'), false)
  assert.equal(isSealed(stored), true)
  assert.equal(open(stored, key), pem)
  assert.notEqual(seal(pem, key), stored, 'a fresh IV each time')
})

test('a value without the prefix is plaintext from before and reads as is, with or without a key', () => {
  assert.equal(isSealed(pem), false)
  assert.equal(open(pem, key), pem)
  assert.equal(open(pem, null), pem)
})

test('a wrong key, no key, a changed byte or an unknown version are refused, never returned as garbage', () => {
  const stored = seal(pem, key)
  assert.throws(() => open(stored, randomBytes(32)), SealedSecretError)
  assert.throws(() => open(stored, null), SealedSecretError)
  const parts = stored.split(':')
  const ciphertext = Buffer.from(parts[4]!, 'base64')
  ciphertext[0]! ^= 1
  assert.throws(() => open([...parts.slice(0, 4), ciphertext.toString('base64')].join(':'), key), SealedSecretError)
  assert.throws(() => open(stored.replace('pwenc:v1:', 'pwenc:v9:'), key), SealedSecretError)
  assert.throws(() => open('pwenc:v1:garbage', key), SealedSecretError)
})
