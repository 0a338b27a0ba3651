// The data directory lock in one process (src/store/infrastructure/data-dir-lock.ts): a second hold is refused naming the
// holder, a lock file of a process that is gone is taken over, and release removes only our own file.
// Takeover is atomic: of several processes taking over one stale lock at once exactly one wins, and
// an empty lock file being written is not stale.
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { after, test } from 'node:test'
import { assertDataDirFree, DataDirLockedError, lockDataDir } from '../../src/store/infrastructure/data-dir-lock.ts'

const dirs: string[] = []
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'paywatch-lockfile-'))
  dirs.push(dir)
  return dir
}
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

/** A pid that ran and is gone (a child that has exited). */
const deadPid = (): number => spawnSync('true').pid!

test('one hold at a time; release frees the folder', () => {
  const dir = freshDir()
  const lock = lockDataDir(dir)
  assert.equal(readFileSync(join(dir, 'paywatch.pid'), 'utf8').split('\n')[0], String(process.pid))
  assert.throws(
    () => lockDataDir(dir),
    (error: unknown) => error instanceof DataDirLockedError && error.pid === process.pid,
  )
  assert.throws(() => assertDataDirFree(dir), DataDirLockedError)
  lock.release()
  assert.equal(existsSync(join(dir, 'paywatch.pid')), false)
  lockDataDir(dir).release()
})

test('a living other process holds it; a dead one does not; our own pid from an earlier life does not', () => {
  const dir = freshDir()
  const file = join(dir, 'paywatch.pid')
  writeFileSync(file, `${process.ppid}\n`) // alive: the test runner
  assert.throws(
    () => lockDataDir(dir),
    (error: unknown) =>
      error instanceof DataDirLockedError && error.message.includes(dir) && error.message.includes(`process ${process.ppid}`),
  )
  writeFileSync(file, `${deadPid()}\n`)
  assertDataDirFree(dir)
  const taken = lockDataDir(dir)
  assert.equal(readFileSync(file, 'utf8').split('\n')[0], String(process.pid))
  taken.release()
  // A container restarted with the same pid finds its own pid in the file, but does not hold it.
  writeFileSync(file, `${process.pid}\n`)
  lockDataDir(dir).release()
  writeFileSync(file, 'garbage')
  lockDataDir(dir).release()
  // Written before a reboot (another boot id): the pid may be anyone's now.
  if (existsSync('/proc/sys/kernel/random/boot_id')) {
    writeFileSync(file, `${process.ppid}\nnot-this-boot\n`)
    lockDataDir(dir).release()
  }
})

test('release leaves a lock file that is no longer ours', () => {
  const dir = freshDir()
  const lock = lockDataDir(dir)
  writeFileSync(join(dir, 'paywatch.pid'), `${process.ppid}\n`)
  lock.release()
  assert.equal(readFileSync(join(dir, 'paywatch.pid'), 'utf8').trim(), String(process.ppid))
})

test('an empty lock file being written is not stale; one left empty long ago is', () => {
  const dir = freshDir()
  const file = join(dir, 'paywatch.pid')
  writeFileSync(file, '')
  assert.throws(
    () => lockDataDir(dir),
    (error: unknown) => error instanceof DataDirLockedError && error.message.includes('being locked'),
  )
  assert.equal(readFileSync(file, 'utf8'), '', 'left to its writer')
  const tenSecondsAgo = new Date(Date.now() - 10_000)
  utimesSync(file, tenSecondsAgo, tenSecondsAgo)
  lockDataDir(dir).release()
})

test('three processes take over one stale lock at once, 100 rounds: exactly one wins each round', async () => {
  const racers = [0, 1, 2].map(() => {
    const child = spawn(process.execPath, [join(import.meta.dirname, 'support', 'lock-racer.ts')], { stdio: ['pipe', 'pipe', 'inherit'] })
    const answers: string[] = []
    let waiting: (() => void) | undefined
    createInterface({ input: child.stdout! }).on('line', (line) => {
      answers.push(line)
      waiting?.()
    })
    const next = async (): Promise<string> => {
      while (answers.length === 0) await new Promise<void>((resolve) => (waiting = resolve))
      return answers.shift()!
    }
    return { child, next }
  })
  try {
    for (const racer of racers) assert.equal(await racer.next(), 'ready')
    const wins: number[] = []
    for (let round = 0; round < 100; round++) {
      const dir = freshDir()
      writeFileSync(join(dir, 'paywatch.pid'), `${deadPid()}\n`)
      for (const racer of racers) racer.child.stdin!.write(`${dir}\n`)
      const answers = await Promise.all(racers.map((racer) => racer.next()))
      assert.ok(
        answers.every((a) => a === 'won' || a === 'lost'),
        `round ${round}: ${answers}`,
      )
      wins.push(answers.filter((a) => a === 'won').length)
    }
    assert.deepEqual(
      wins.filter((n) => n !== 1),
      [],
      `rounds with other than one winner: ${wins.filter((n) => n !== 1).length} of 100`,
    )
  } finally {
    for (const racer of racers) racer.child.kill()
  }
})
