// One process of the lock takeover race (test/store/data-dir-lock.test.ts): for each folder read from
// stdin it tries to lock the folder at once and answers one line, `won` or `lost`, keeping what it won
// until it exits.
import { createInterface } from 'node:readline'
import { DataDirLockedError, lockDataDir } from '../../../src/store/infrastructure/data-dir-lock.ts'

const lines = createInterface({ input: process.stdin })
process.stdout.write('ready\n')
lines.on('line', (dir) => {
  try {
    lockDataDir(dir)
    process.stdout.write('won\n')
  } catch (error) {
    process.stdout.write(error instanceof DataDirLockedError ? 'lost\n' : `error ${(error as Error).message}\n`)
  }
})
