import { createRequire } from 'node:module'

/** Absolute path of the anvil binary shipped by the npm package. */
export function anvilBinary(): string {
  return createRequire(import.meta.url).resolve('@foundry-rs/anvil-linux-amd64/bin/anvil')
}

/**
 * A `sh -c` script that runs its arguments ("$0" "$@": anvil and its options) in the background and keeps
 * the spawner's stdin on fd 3 (background jobs get /dev/null as stdin otherwise): once that pipe hits EOF
 * (the spawner closed it, or died in any way, even SIGKILL) it ends anvil, which is never left behind.
 * Exits with anvil's status if anvil dies by itself, so crashes stay visible. `announcePid` prints
 * `anvil-pid: N` first, for a spawner that needs anvil's own pid.
 */
export function anvilWatchdogScript(options: { announcePid: boolean }): string {
  return `
exec 3<&0
"$0" "$@" </dev/null &
pid=$!
${options.announcePid ? 'echo "anvil-pid: $pid"' : ''}
( while read -r _ <&3; do :; done; kill -TERM $pid 2>/dev/null ) &
watcher=$!
trap 'kill -TERM $pid 2>/dev/null' TERM INT HUP
wait $pid
status=$?
kill $watcher 2>/dev/null
exit $status
`
}
