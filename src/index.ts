export {YardError, InputError, RefusedError, OperationError, ExitCode} from './core/errors.js'
