// The service's OpenAPI document, as GET /openapi.json answers it, built in process on an empty
// in-memory database with no chains: the same for every run, whatever the machine's configuration.
import pino from 'pino'
import { loadConfig } from '../src/config/config.ts'
import { createService } from '../src/service.ts'

export async function openApiDocument(): Promise<Record<string, unknown>> {
  const loaded = loadConfig({
    PAYWATCH_ADMIN_TOKEN: 'openapi-document-token-0123456789abcdef',
    LOG_LEVEL: 'silent',
  })
  // In memory (loadConfig would resolve the folder to a path).
  const config = { ...loaded, dataDir: 'memory://' }
  const service = await createService(config, { logger: pino({ level: 'silent' }), background: false })
  try {
    const response = await service.app.inject({ method: 'GET', url: '/openapi.json' })
    if (response.statusCode !== 200) throw new Error(`GET /openapi.json answered ${response.statusCode}`)
    return response.json()
  } finally {
    await service.close()
  }
}
