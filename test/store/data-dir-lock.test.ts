// The data directory lock in one process (src/store/data-dir-lock.ts): a second hold is refused naming the
// holder, a lock file of a process that is gone is taken over, and release removes only our own file.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { assertDataDirFree, DataDirLockedError, lockDataDir } from '../../src/store/data-dir-lock.ts'

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
