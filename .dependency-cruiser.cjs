/**
 * Import boundaries of the layers in STYLE.md ("Layers"): plugins reach yard only through the
 * SDK, the SDK stands alone, commands and the TUI enter core through a domain's index, and
 * nothing in src/ imports in a circle. `npm run lint` runs it (`depcruise src`).
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'plugin-imports-sdk-only',
      comment: 'A built-in plugin imports src/sdk/, its own folder and packages only, like a third-party one.',
      severity: 'error',
      from: {path: '^src/plugins/([^/]+)/'},
      to: {path: '^src/', pathNot: ['^src/sdk/', '^src/plugins/$1/']},
    },
    {
      name: 'sdk-stands-alone',
      comment: 'The plugin SDK is a published contract: it imports nothing of core, commands, the TUI or plugins.',
      severity: 'error',
      from: {path: '^src/sdk/'},
      to: {path: '^src/(core|commands|tui|cli|plugins|hooks)/'},
    },
    {
      name: 'enter-core-through-index',
      comment:
        "Commands, the TUI and the start-up paths call a domain's use cases through src/core/<domain>/index.ts only. " +
        'The exceptions are the start-up paths without oclif (src/cli/fast-exec.ts, fast-create.ts, ' +
        'fast-worktree-add.ts, their fast-run.ts and worktree-added.ts): an index evaluates every use case it names, which those ' +
        'paths would load on every agent instruction, create or add and never call ' +
        '(measured for exec: 8 modules, ~5 ms).',
      severity: 'error',
      from: {
        path: '^src/(commands|tui|cli)/',
        pathNot: String.raw`^src/cli/(fast-(exec|create|worktree-add|run)|worktree-added)\.ts$`,
      },
      to: {path: '^src/core/', pathNot: String.raw`^src/core/[^/]+/index\.ts$`},
    },
    {
      name: 'no-circular',
      comment: 'Modules in src/ do not import each other in a circle (type-only imports included).',
      severity: 'error',
      from: {path: '^src/'},
      to: {circular: true, viaOnly: {dependencyTypesNot: ['type-only']}},
    },
  ],
  options: {
    doNotFollow: {path: 'node_modules'},
    // Keep type-only imports in the graph: a plugin may not even name a core type.
    tsPreCompilationDeps: true,
    tsConfig: {fileName: 'tsconfig.json'},
    enhancedResolveOptions: {extensions: ['.ts', '.tsx', '.js', '.json']},
    reporterOptions: {text: {highlightFocused: true}},
  },
}
