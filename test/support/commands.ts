import { Command } from 'commander'

/** Runs CLI commands in process: `register` adds them to a fresh program; answers what they printed, parsed as JSON. */
export async function runPrintedCommand(register: (program: Command) => void, args: string[]): Promise<any> {
  const program = new Command('paywatch').exitOverride()
  register(program)
  const printed: string[] = []
  const log = console.log
  console.log = (line: string) => void printed.push(line)
  try {
    await program.parseAsync(args, { from: 'user' })
  } finally {
    console.log = log
  }
  return JSON.parse(printed.join('\n'))
}
