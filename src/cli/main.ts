import { Command } from 'commander'
import { ConfigError, loadConfig, type Config } from '../config/config.ts'
import { registerAdminCommands } from './admin-commands.ts'
import { registerDataCommands } from './data-commands.ts'
import { registerCallbackCommands } from './callback-commands.ts'
import { registerEndpointCommands } from './endpoint-commands.ts'
import { registerAccountDataCommands } from './account-data-commands.ts'
import { dev, devDataDir } from './dev.ts'
import { devBeside } from './beside-dev.ts'
import { devPay, type DevPayOptions } from './dev-pay.ts'
import { readFileSync } from 'node:fs'
import { serve } from './serve.ts'
import { unrefLauncherChannel } from './orphan-watch.ts'
import { withDatabase } from './with-database.ts'
import { migrate } from '../store/infrastructure/migrate.ts'

function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version
}

/** Configuration problems end the command with one line naming the setting. */
export function configOrExit(): Config {
  try {
    return loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`paywatch: configuration error: ${error.message}`)
      process.exit(2)
    }
    throw error
  }
}

unrefLauncherChannel()

const program = new Command('paywatch')
  .description('Paywatch: self-hostable blockchain payment tracking')
  .version(packageVersion(), '-V, --version')
  .showHelpAfterError()

program
  .command('serve')
  .description('run the service: HTTP API, chain followers and callback workers')
  .action(async () => serve(configOrExit()))

const devCommand = program
  .command('dev')
  .description('local playground: an Anvil node as "ethereum", the service, and a printed API key')
  .option('--anvil-port <port>', 'port of the local Anvil node', '8545')
  .action(async (options: { anvilPort: string }) => dev(configOrExit(), { anvilPort: Number(options.anvilPort) }))
devCommand
  .command('pay')
  .description('send one payment on the running dev chain and follow it to its callback')
  .option('--amount <amount>', 'amount of ETH (or of DUSD with --token)', '0.01')
  .option('--callback <url>', 'callback URL (default: the example receiver of npm run example:receiver)', 'http://127.0.0.1:4000/')
  .option('--no-nonce', 'track it without a nonce or sender: found by receiver and amount')
  .option('--token', "pay in the dev chain's ERC-20 (DUSD) instead of ETH")
  .option('--underpay', 'send half the amount: the payment fails and its callback says so (with --no-nonce: at a deadline 3 blocks ahead)')
  .option('--reorg', 'remove the payment by a reorg (anvil_reorg) after the service saw it, before it is final')
  .action(async (options: DevPayOptions) => {
    // The running dev's folder, also from a subfolder of the project (beside-dev.ts).
    const config = configOrExit()
    return devPay(devBeside(config)?.dataDir ?? devDataDir(config), options)
  })

program
  .command('migrate')
  .description('apply database migrations and exit')
  .action(async () => {
    await withDatabase(
      configOrExit(),
      async (db) => {
        const applied = await migrate(db)
        console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date')
      },
      { migrate: false },
    )
  })

registerAdminCommands(program, configOrExit)
registerDataCommands(program, configOrExit)
registerCallbackCommands(program, configOrExit)
registerEndpointCommands(program, configOrExit)
registerAccountDataCommands(program, configOrExit)

try {
  await program.parseAsync()
} catch (error) {
  console.error(`paywatch: ${(error as Error).message}`)
  process.exit(1)
}
