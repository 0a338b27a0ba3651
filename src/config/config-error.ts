/**
 * A bad configuration value; `message` is the one line printed before the process stops. Stays on
 * `Error`: config sits below common/ in the layer order, and a bad setting is never retried.
 */
export class ConfigError extends Error {
  override name = 'ConfigError'
}
