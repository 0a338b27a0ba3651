// @paywatch/client: a typed client of the Paywatch API and the two checks a callback receiver makes
// (docs/api.md, "Integrator kit"). Types are generated from the service's /openapi.json.
export {
  createClient,
  PaywatchError,
  type ClientOptions,
  type PaymentDeliveries,
  type EarlierPaymentRecord,
  type PaymentRecord,
  type PaymentRequest,
  type PaywatchClient,
  type Problem,
  type ReleaseRequest,
} from './client.ts'
export { verifyCallback, type VerifyCallbackOptions } from './verify-callback.ts'
export { verifyWebhook, type VerifyWebhookOptions } from './verify-webhook.ts'
export type { components, paths } from './openapi-types.ts'
