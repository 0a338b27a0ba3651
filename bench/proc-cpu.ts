// CPU accounting of the benchmarks from Linux /proc: where a request's or a callback's cost goes.
import { readFileSync } from 'node:fs'

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
