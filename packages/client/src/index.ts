// @paywatch/client: filled in by the integrator kit (docs/api.md). Placeholder so the workspace resolves.
export {}
