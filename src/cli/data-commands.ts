import type { Command } from 'commander'
import pino from 'pino'
import { getAddress, isAddress, type Address } from 'viem'
import { createAssetsReader } from '../chain/assets-reader.ts'
import { createPriceOracle } from '../chain/price-oracle.ts'
import { createChainRegistry, type ChainHandle } from '../chain/registry.ts'
import { createLogger } from '../common/logger.ts'
import { createMetrics } from '../common/metrics.ts'
import { createShutdown } from '../common/shutdown.ts'
import { systemClock } from '../common/clock.ts'
import { type Common } from '../common/common.ts'
import type { Config } from '../config/config.ts'

/**
 * `paywatch assets <chain> <account>` and `paywatch price <chain> <token>`: the same data as the
 * HTTP endpoints, read straight from the configured RPCs (no database, no service).
 */
export function registerDataCommands(program: Command, config: () => Config): void {
  program
    .command('assets <chain> <account>')
    .description("an account's native balance and listed token balances, as the assets endpoint answers them")
    .action(async (chainName: string, account: string) => {
      const { common, chain } = await openChain(config(), chainName)
      const assets = await createAssetsReader(common.logger).assetsOf(chain, address(account, 'account'))
      await print(JSON.stringify(assets, null, 2))
    })

  program
    .command('price <chain> <token>')
    .description('USD price of one whole token from on-chain liquidity, as the prices endpoint answers it')
    .action(async (chainName: string, token: string) => {
      const { common, chain } = await openChain(config(), chainName)
      const oracle = createPriceOracle({ logger: common.logger, clock: common.clock, cacheMs: 0 })
      const price = await oracle.priceOf(chain, address(token, 'token'))
      if (price === null) throw new Error(`no price route for ${token} on ${chainName}`)
      await print(JSON.stringify(price))
    })
}

async function openChain(config: Config, name: string): Promise<{ common: Common; chain: ChainHandle }> {
  // Logs go to stderr so that stdout carries only the answer.
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, pino.destination(2))
  const common: Common = { config, logger, metrics: createMetrics(), clock: systemClock, shutdown: createShutdown(logger) }
  const chains = createChainRegistry(common)
  await chains.verify()
  const chain = chains.get(name)
  if (!chain) {
    const tracked =
      chains
        .all()
        .map((c) => c.config.name)
        .join(', ') || 'none'
    throw new Error(
      `blockchain "${name}" is not tracked (tracked: ${tracked}; set PAYWATCH_RPC_${name.toUpperCase()} or chains in PAYWATCH_CONFIG)`,
    )
  }
  return { common, chain }
}

function address(value: string, what: string): Address {
  if (!isAddress(value, { strict: false })) throw new Error(`${what} ${JSON.stringify(value)} is not a 0x-prefixed 20-byte hex address`)
  return getAddress(value.toLowerCase())
}

/** Writes the answer, then ends the process (a WebSocket RPC would otherwise keep it alive). */
function print(text: string): Promise<void> {
  return new Promise(() => process.stdout.write(`${text}\n`, () => process.exit(0)))
}
