// Loaded with `node --import` ahead of a yard process under test: appends every module URL the
// process resolves to the file named by RECORD_IMPORTS_FILE, one per line, so a test can tell
// which packages a command loaded (module customization hooks, Node >= 20.6).
import {register} from 'node:module'

register(
  'data:text/javascript,' +
    encodeURIComponent(String.raw`
import {appendFileSync} from 'node:fs'
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context)
  if (process.env.RECORD_IMPORTS_FILE) appendFileSync(process.env.RECORD_IMPORTS_FILE, result.url + '\n')
  return result
}`),
)
