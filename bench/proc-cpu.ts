// CPU accounting of the benchmarks from Linux /proc: where a request's or a callback's cost goes.
import { readdirSync, readFileSync } from 'node:fs'

/**
 * Name and CPU time (user + system, ms) of a process or thread from its `stat` file, e.g.
 * `/proc/123/stat` or `/proc/self/task/456/stat`; null when it cannot be read (gone, not Linux).
 */
export function readStat(path: string): { name: string; cpuMs: number } | null {
  try {
    const stat = readFileSync(path, 'utf8')
    const nameEnd = stat.lastIndexOf(') ')
    const fields = stat.slice(nameEnd + 2).split(' ')
    // utime and stime, in clock ticks of 10 ms.
    return { name: stat.slice(stat.indexOf('(') + 1, nameEnd), cpuMs: (Number(fields[11]) + Number(fields[12])) * 10 }
  } catch {
    return null
  }
}

/** Busy and idle CPU time of the whole machine in ms (all cores), from /proc/stat. */
export function machineCpu(): { busy: number; idle: number } | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
    const idle = fields[3]! + fields[4]!
    const total = fields.slice(0, 8).reduce((a, b) => a + b, 0)
    return { busy: (total - idle) * 10, idle: idle * 10 }
  } catch {
    return null
  }
}

/** CPU time of each PostgreSQL process of this machine in ms. */
export function postgresCpuMs(): Map<string, number> {
  const times = new Map<string, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const stat = readStat(`/proc/${entry}/stat`)
    if (stat?.name === 'postgres') times.set(entry, stat.cpuMs)
  }
  return times
}

/** CPU PostgreSQL spent between two readings (a backend that exited meanwhile is not counted). */
export function postgresCpuSince(before: Map<string, number>): number {
  let spent = 0
  for (const [pid, ms] of postgresCpuMs()) spent += ms - (before.get(pid) ?? 0)
  return spent
}
