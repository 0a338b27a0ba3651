// Shared by the payments API tests: a valid create body and problem+json assertions.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'

export const NATIVE = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'
export const SENDER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
export const RECEIVER = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC'
export const FEE_RECEIVER = '0x90F79bf6EB2c4f870365E785982E1f101E93b906'
export const TX_HASH = `0x${'ab'.repeat(32)}`
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

let nonce = 1_000
/** A valid current-form create body with a fresh nonce and secret_id; `overrides` replace fields (undefined removes one). */
export function createBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const body: Record<string, unknown> = {
    blockchain: 'ethereum',
    sender: SENDER,
    nonce: nonce++,
    receiver: RECEIVER,
    token: NATIVE,
    amount: '1.5',
    after_block: 12,
    secret_id: randomUUID(),
    callback: 'https://shop.example/paywatch/callback',
    ...overrides,
  }
  for (const [key, value] of Object.entries(overrides)) if (value === undefined) delete body[key]
  return body
}

/** An earlier-form (`uuid`) body: transaction and confirmations required, callback optional. */
export function earlierBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return createBody({ secret_id: undefined, callback: undefined, uuid: randomUUID(), transaction: TX_HASH, confirmations: 2, ...overrides })
}

export interface Problem {
  type: string
  title: string
  status: number
  detail: string
  code: string
  errors?: { path: string; message: string }[]
}

/** Asserts an RFC 9457 problem with the given status and code; returns the body. */
export function assertProblem(res: LightMyRequestResponse, status: number, code: string): Problem {
  assert.equal(res.statusCode, status, `expected ${status} ${code}, got ${res.statusCode}: ${res.body}`)
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/)
  const body = res.json<Problem>()
  assert.equal(body.code, code, res.body)
  assert.equal(body.status, status)
  assert.equal(typeof body.type, 'string')
  assert.ok(body.type.length > 0)
  assert.equal(typeof body.title, 'string')
  assert.ok(body.title.length > 0)
  assert.equal(typeof body.detail, 'string')
  assert.ok(body.detail.length > 0)
  return body
}

/** Asserts a 400 VALIDATION_FAILED naming `path` among its errors. */
export function assertFieldError(res: LightMyRequestResponse, path: string): Problem {
  const body = assertProblem(res, 400, 'VALIDATION_FAILED')
  assert.ok(Array.isArray(body.errors), `errors[] missing: ${res.body}`)
  assert.ok(
    body.errors!.some((e) => e.path === path && typeof e.message === 'string' && e.message.length > 0),
    `expected an error on path "${path}": ${res.body}`,
  )
  return body
}
