/**
 * `exec`: `yard exec [NAME] -- CMD…` (DESIGN.md §4.2, §5.2) in a worktree's box or a sandbox,
 * never on the host, without a terminal: the command gets no stdin, its output is kept up to a
 * cap (reported), and after a time-out its engine client is killed (the command itself may go on
 * in the box: `podman exec` does not pass the signal on). Its exit code is the result's `exitCode`;
 * yard's own failures before it runs (a stopped box: 1, the engine: 125) are tool errors.
 */
import {z} from 'zod'

import {execAnywhere} from '../sandbox/exec.js'
import {ExecCapture} from './capture.js'
import {defineTool} from './tool.js'

/** Bytes of stdout and of stderr an `exec` result keeps, each. */
export const EXEC_OUTPUT_CAP_BYTES = 64 * 1024
export const EXEC_TIMEOUT_DEFAULT_SECONDS = 120
export const EXEC_TIMEOUT_MAX_SECONDS = 3600

export const exec = defineTool({
  name: 'exec',
  title: 'Run a command in a box or sandbox',
  description: `yard exec NAME -- COMMAND…: runs the command (an argv array, no shell unless you run one) in the box of worktree NAME, in its checkout's directory, or in a sandbox (NAME/BRANCH, or sandbox), never on the host. No stdin and no terminal; stdout and stderr are each kept up to ${EXEC_OUTPUT_CAP_BYTES} bytes (truncated says when the cap cut them); after timeoutSeconds yard stops waiting and kills its engine client (exit code 124, timedOut); the engine does not pass that on, so the command itself may go on in the box or sandbox until it ends (box_down ends a box's). structuredContent: {exitCode, timedOut, timeoutSeconds, stdout, stderr, stdoutBytes, stderrBytes, truncated, outputCapBytes}. The box must be running (box_up).`,
  input: z
    .object({
      name: z
        .string()
        .describe(
          'worktree name or main (default: YARD_WORKTREE of the server, else main); SANDBOX/BRANCH for a sandbox',
        )
        .optional(),
      command: z.array(z.string()).min(1).describe('the argv to run, e.g. ["git", "status"]'),
      sandbox: z.string().describe("run in this sandbox's attached branch").optional(),
      slot: z.string().describe('the sandbox slot (default: the first)').optional(),
      local: z.boolean().describe("the worktree's box, even when a sandbox has the name").default(false),
      timeoutSeconds: z
        .number()
        .int()
        .min(1)
        .max(EXEC_TIMEOUT_MAX_SECONDS)
        .describe('seconds to wait for the command before yard stops it (exit 124)')
        .default(EXEC_TIMEOUT_DEFAULT_SECONDS),
    })
    .strict(),
  readOnly: false,
  hints: {openWorld: true},
  async run(args, call) {
    const capture = new ExecCapture(EXEC_OUTPUT_CAP_BYTES, args.timeoutSeconds * 1000)
    const exitCode = await execAnywhere(call.context(capture), call.backends, {
      name: args.name,
      sandbox: args.sandbox,
      slot: args.slot,
      local: args.local,
      argv: args.command,
      tty: false,
    })
    const output = capture.result()
    const how = capture.timedOut
      ? `ran out of its ${args.timeoutSeconds} s (exit 124): yard stopped waiting; it may go on in the box or sandbox`
      : `exited ${exitCode}`
    return {
      data: {exitCode, timedOut: capture.timedOut, timeoutSeconds: args.timeoutSeconds, ...output},
      text: `${args.command.join(' ')} ${how}${output.truncated ? ` (output cut at ${EXEC_OUTPUT_CAP_BYTES} bytes per stream)` : ''}`,
    }
  },
})
