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

/**
 * JSON lines, one per event (for log collectors); readable lines when the output is a terminal (a person
 * running `paywatch dev` or `npm start`), through pino-pretty.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = { level, redact: { paths: redactPaths, censor: '[redacted]' } }
  if (!destination && process.stdout.isTTY) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss' } } })
  }
  return pino(options, destination)
}
