import { Command } from 'commander'
import { ConfigError, loadConfig, type Config } from '../config/config.ts'
import { registerAdminCommands } from './admin-commands.ts'
import { registerDataCommands } from './data-commands.ts'
import { registerCallbackCommands } from './callback-commands.ts'
import { registerEndpointCommands } from './endpoint-commands.ts'
import { registerAccountDataCommands } from './account-data-commands.ts'
import { dev } from './dev.ts'
import { serve } from './serve.ts'
import { withDatabase } from './with-database.ts'
import { migrate } from '../store/migrate.ts'

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

const program = new Command('paywatch').description('Paywatch: self-hostable blockchain payment tracking').showHelpAfterError()

program
  .command('serve')
  .description('run the service: HTTP API, chain followers and callback workers')
  .action(async () => serve(configOrExit()))

program
  .command('dev')
  .description('local playground: an Anvil node as "ethereum", the service, and a printed API key')
  .option('--anvil-port <port>', 'port of the local Anvil node', '8545')
  .action(async (options: { anvilPort: string }) => dev(configOrExit(), { anvilPort: Number(options.anvilPort) }))

program
  .command('migrate')
  .description('apply database migrations and exit')
  .action(async () => {
    await withDatabase(configOrExit(), async (db) => {
      const applied = await migrate(db)
      console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date')
    })
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
