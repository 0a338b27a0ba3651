/**
 * A long-running command started by a launcher (bin/paywatch.js under `npx paywatch …` or `npm run`) over
 * an IPC channel stops as on SIGTERM when that launcher is gone, however it went (even kill -9): the
 * channel closes with it. Without a channel (started directly) nothing changes.
 */
export function stopWhenOrphaned(): void {
  if (!process.channel) return
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'))
}

/** The launcher's channel alone must not keep a command alive once its work is done (src/cli/main.ts). */
export function unrefLauncherChannel(): void {
  process.channel?.unref()
}
