import type { Config } from './config.ts'

export interface MissingSetup {
  /** The variable that adds the missing piece. */
  variable: string
  /** One log line: what is missing and how to add it. */
  message: string
}

/**
 * What a service started with the defaults (`npm start` alone) cannot do yet, one entry per missing piece
 * (docs/operations.md, "First start"): logged once at start, as warnings that name the exact variable.
 */
export function missingSetup(config: Pick<Config, 'adminToken'>, trackedChains: string[]): MissingSetup[] {
  const missing: MissingSetup[] = []
  if (trackedChains.length === 0) {
    missing.push({
      variable: 'PAYWATCH_RPC_<CHAIN>',
      message:
        'no blockchain is tracked, so no payment can be: set PAYWATCH_RPC_<CHAIN> to JSON-RPC URLs, e.g. PAYWATCH_RPC_ETHEREUM=https://… npm start (or "chains" in the PAYWATCH_CONFIG file); to try Paywatch on a local chain: npx paywatch dev',
    })
  }
  if (!config.adminToken) {
    missing.push({
      variable: 'PAYWATCH_ADMIN_TOKEN',
      message:
        'the admin API and /dashboard are off, so no account or API key can be made over HTTP: set PAYWATCH_ADMIN_TOKEN to a long random secret, e.g. PAYWATCH_ADMIN_TOKEN=$(openssl rand -hex 24) npm start (or use npx paywatch accounts create <name> while the service is stopped)',
    })
  }
  return missing
}
