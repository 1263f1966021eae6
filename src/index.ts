export {YardError, InputError, RefusedError, OperationError, ExitCode} from './sdk/errors.js'
