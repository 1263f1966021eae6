/**
 * The plugin SDK, `@yard-dev/cli/backend` (DESIGN.md §7; the authoring guide is docs/plugins.md).
 *
 * A backend plugin imports from here, and from nowhere else in yard:
 * - the contracts (`StackBackend`, `MachineBackend`, `CacheBackend`, `SandboxBackend`), the
 *   `Target` every backend receives and the `BackendFactory` its `yard:backends` hook returns;
 * - `CONTRACT_VERSION`, the contract major this yard implements, and `BACKEND_KINDS`;
 * - `backendFactorySchema` (zod) and `checkFactory`, the very checks the registry applies to a
 *   hook's result, so a plugin can test its factories as yard will see them;
 * - the errors yard renders as what / why / fix with their exit code: `InputError` (2),
 *   `RefusedError` (3), `OperationError` (1), `YardError` for any other code of `ExitCode`.
 *
 * Semver: a breaking change to a contract raises `CONTRACT_VERSION`; yard lists a plugin that
 * declares another major as `incompatible` and does not use it.
 */
export * from './core/backend.js'
export {BACKEND_ID_PATTERN, backendFactorySchema, checkFactory, contractMajor} from './core/factory-schema.js'
export type {FactoryCheck} from './core/factory-schema.js'
export {ExitCode, InputError, OperationError, RefusedError, YardError} from './core/errors.js'
export type {ExitCodeValue, YardErrorOptions} from './core/errors.js'
export type {ProcessRunner} from './core/process.js'
export type {ProgressPort, ProgressUpdate} from './core/progress.js'
