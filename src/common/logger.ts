import pino, { type Logger } from 'pino'

/** Secrets that must never reach a log line in clear. */
const redactPaths = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'headers["x-api-key"]',
  'headers.authorization',
  'key',
  'access_token',
  'secret_id',
  'uuid',
  'callback',
]

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: redactPaths, censor: '[redacted]' } }, destination)
}
