#!/usr/bin/env node
// Paywatch runs on the Node.js 24 the project installs (npm package `node`) with the V8 flags of
// `npm start` and its malloc settings (MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_);
// started by an older Node, or without those flags or variables, this launcher hands over to a child
// process and passes signals on to it.
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

// V8 sizes the young generation from the machine's memory: on a large machine it alone can hold
// ~100 MB more than the service needs. 16 MB semi-spaces keep RSS near the heap's real use.
const V8_FLAGS = ['--max-semi-space-size=16']

// glibc gives threads that allocate at once malloc arenas of their own (up to 8 per core) and keeps
// what they freed: at start the threads compiling the embedded database's WebAssembly leave memory
// in them. Two arenas measured 10–40 MB less RSS with no slower creates (docs/performance.md).
const MALLOC_ARENA_MAX = process.env.MALLOC_ARENA_MAX ?? '2'
// glibc raises its mmap threshold (up to 32 MB) after large blocks are freed, so later large blocks come
// from the heap, and it trims the heap's top only past twice that: what the embedded database's start-up
// and a burst of requests freed stayed resident. A fixed 128 KiB for both gives it back (~40 MB less
// RSS at rest on the embedded database, docs/performance.md "Memory after a burst").
const MALLOC_MMAP_THRESHOLD_ = process.env.MALLOC_MMAP_THRESHOLD_ ?? '131072'
const MALLOC_TRIM_THRESHOLD_ = process.env.MALLOC_TRIM_THRESHOLD_ ?? '131072'

const main = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url))
const major = Number(process.versions.node.split('.')[0])
const flagged = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => arg.includes('--max-semi-space-size'))
const mallocSet = ['MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_'].every((name) => process.env[name] !== undefined)
if (major >= 24 && flagged && mallocSet) {
  await import(main)
} else {
  const node = major >= 24 ? process.execPath : fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url))
  if (!existsSync(node)) {
    console.error('paywatch needs Node.js 24: run `npm ci` in the project first')
    process.exit(1)
  }
  // The IPC channel closes when this launcher ends in any way (even kill -9): a long-running command
  // (serve, dev) then stops too, with its own children (src/cli/orphan-watch.ts).
  const child = spawn(node, [...V8_FLAGS, main, ...process.argv.slice(2)], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_ },
  })
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal))
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)))
  stopWithNpm(child)
}

/**
 * `npx paywatch dev` runs npm → sh → this launcher → paywatch. Stopping npm (kill <npm's pid>) ends the sh
 * between, and nothing passes the signal on to us: under npm (npx, npm exec, npm run), once the npm
 * process or the shell it started is gone, the child gets SIGTERM, as from a Ctrl-C. Started any other
 * way (a service manager, `nohup … &`) the launcher outliving its parent is intended and nothing is watched.
 */
function stopWithNpm(child) {
  if (!process.env.npm_command) return
  const parent = process.ppid
  const grandparent = parentOf(parent)
  const watched = [parent, grandparent].filter((pid) => pid !== null && pid > 1)
  const timer = setInterval(() => {
    if (process.ppid === parent && watched.every(isAlive)) return
    clearInterval(timer)
    child.kill('SIGTERM')
  }, 500)
  timer.unref()
}

/** The parent of a process (Linux: /proc/<pid>/stat), or null when it cannot be read. */
function parentOf(pid) {
  try {
    // "pid (comm) state ppid …": comm may contain spaces and parentheses, so read after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    return null
  }
}

function isAlive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error.code === 'EPERM'
  }
}
