/**
 * The package export `@yard-dev/cli/backend`: the plugin SDK (src/sdk/index.ts, docs/plugins.md).
 */
export * from './sdk/index.js'
