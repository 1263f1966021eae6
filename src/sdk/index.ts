export type * from './cache.js'
export {ExitCode, InputError, OperationError, RefusedError, YardError} from './errors.js'
export type {ExitCodeValue, YardErrorOptions} from './errors.js'
export * from './factory-check.js'
export * from './factory.js'
export * from './labels.js'
export {acquireLock, isAlive, withLock} from './lock.js'
export type {HeldLock, LockOptions, LockOwner} from './lock.js'
export type * from './machine.js'
export {busyPorts, isPortFree} from './port-probe.js'
export type {ProcessRunner, RunOptions, RunResult} from './process.js'
export type {ProgressPort, ProgressUpdate} from './progress.js'
export {CACHE_KEY_PATTERN, cacheKey, identitySlug, repoIdentity} from './repo-identity.js'
export type {RepoIdentity, RepoScheme} from './repo-identity.js'
export type * from './sandbox.js'
export type * from './stack.js'
/**
 * The plugin SDK, `@yard-dev/cli/backend` (DESIGN.md §7; the authoring guide is docs/plugins.md).
 * Built-in plugins import from `src/sdk/` only, exactly as third-party plugins import this.
 *
 * - the contracts, one file each: `Target` and `BackendContext` (target.ts), `MachineBackend`
 *   (machine.ts), `StackBackend` (stack.ts), `CacheBackend` (cache.ts), `SandboxBackend`
 *   (sandbox.ts), and `BackendFactory`, which a plugin's `yard:backends` hook returns (factory.ts);
 * - `CONTRACT_VERSION`, the contract major this yard implements, and `BACKEND_KINDS`;
 * - `backendFactorySchema` (zod) and `checkFactory` (factory-check.ts), the very checks the
 *   registry applies to a hook's result, so a plugin can test its factories as yard will see them;
 * - the errors yard renders as what / why / fix with their exit code: `InputError` (2),
 *   `RefusedError` (3), `OperationError` (1), `YardError` for any other code of `ExitCode`;
 * - helpers a backend needs to behave as yard's own: the labels (labels.ts), the port probe
 *   (port-probe.ts), the lock (lock.ts), repository identity (repo-identity.ts), and the types of
 *   the process runner and progress port a backend is handed.
 *
 * Semver: a breaking change to a contract raises `CONTRACT_VERSION`; yard lists a plugin that
 * declares another major as `incompatible` and does not use it.
 */
export type * from './target.js'
