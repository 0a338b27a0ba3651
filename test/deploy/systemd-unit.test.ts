// deploy/paywatch.service passes `systemd-analyze verify` once installed (here: with /opt/paywatch replaced by
// this checkout, so that the paths it names exist), and the check does catch a broken unit.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { test } from 'node:test'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '')
const analyze = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((path) => existsSync(path))
const skip = analyze ? false : 'systemd-analyze is not installed on this machine'

async function verify(unitText: string): Promise<{ ok: boolean; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'paywatch-unit-'))
  const file = join(dir, 'paywatch.service')
  writeFileSync(file, unitText)
  try {
    const { stdout, stderr } = await run(analyze!, ['verify', file])
    return { ok: true, output: stdout + stderr }
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string }
    return { ok: false, output: (failed.stdout ?? '') + (failed.stderr ?? '') }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test('deploy/paywatch.service verifies; a unit naming a missing program does not', { skip }, async () => {
  const unit = readFileSync(join(root, 'deploy', 'paywatch.service'), 'utf8')
  assert.match(unit, /^ExecStart=\/opt\/paywatch\/node_modules\/\.bin\/node .*src\/cli\/main\.ts serve$/m)
  const installed = unit.replaceAll('/opt/paywatch', root)
  const good = await verify(installed)
  assert.ok(good.ok, good.output)
  assert.doesNotMatch(good.output, /paywatch\.service:\d+:/, 'no warning about a line of the unit')
  const broken = await verify(installed.replace(`${root}/node_modules/.bin/node`, '/nonexistent/node'))
  assert.equal(broken.ok, false, 'the check fails on a unit whose program does not exist')
})
