export {ExitCode, InputError, OperationError, RefusedError, YardError} from './sdk/errors.js'
