import type { FieldError } from './field-errors.ts'
import type { PaymentRequest } from './payment-request.ts'

/** Why a new tracking's references (integration, link, shop, callback host) are refused. */
export type ReferenceRefusal =
  | { kind: 'conflict'; detail: string }
  | { kind: 'invalid'; errors: FieldError[] }
  | { kind: 'not-found'; detail: string }

/**
 * A create-time check of what a new tracking refers to. Subsystems contribute checks (callbacks: the
 * integration and the callback host; payments: links and shops); creation runs them in order and
 * answers the first refusal.
 */
export type ReferenceCheck = (accountId: string, request: PaymentRequest) => Promise<ReferenceRefusal | undefined>
