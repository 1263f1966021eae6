/**
 * `up`, `down`, `ps`, `logs`, `ports`, `env`, `box_up`, `box_down`: the stack and box commands
 * of the targeted checkout (DESIGN.md §3.3, §4.2), by the same core functions.
 */
import {z} from 'zod'

import {InputError} from '../../sdk/errors.js'
import {stackEnv} from '../config/env.js'
import {allPorts, sandboxPorts, targetPorts} from '../identity/ports.js'
import {boxDown, boxUp} from '../machine/box.js'
import {machineSocketEnv} from '../machine/machine.js'
import {describeTarget, stackDown, stackLogs, stackPs, stackUp} from '../stack/stack.js'
import {resolveTarget} from '../workspace/workspace.js'
import {TailCapture} from './capture.js'
import {count, defineTool, worktreeArg} from './tool.js'

const targetInput = z.object({worktree: worktreeArg}).strict()

export const up = defineTool({
  name: 'up',
  title: "Start a checkout's stack",
  description:
    "yard up: probes the checkout's host ports (code 3 when one is busy or the project name belongs to another checkout), then starts its compose project with the env of `env`; a running project is left as it is. It does not start the box (box_up). structuredContent: {project, boxOnly}.",
  input: targetInput,
  readOnly: false,
  hints: {idempotent: true},
  async run(args, call) {
    const outcome = await stackUp(call.context(), call.backends, args.worktree)
    const ports = Object.entries(outcome.target.ports)
      .map(([key, port]) => `${key}=${port}`)
      .join(' ')
    return {
      data: {project: outcome.target.project, boxOnly: outcome.boxOnly},
      text: outcome.boxOnly
        ? `${describeTarget(outcome.target)} is box-only (no compose file): nothing to start`
        : `${describeTarget(outcome.target)} is up${ports ? `: ${ports}` : ''}`,
    }
  },
})

export const down = defineTool({
  name: 'down',
  title: "Stop a checkout's stack",
  description:
    "yard down: removes the checkout's stack containers and network; volumes stay. structuredContent: {project, removed: [what went]}.",
  input: targetInput,
  readOnly: false,
  hints: {idempotent: true},
  async run(args, call) {
    const outcome = await stackDown(call.context(), call.backends, args.worktree)
    return {
      data: {project: outcome.target.project, removed: outcome.gone},
      text:
        outcome.gone.length === 0
          ? `${describeTarget(outcome.target)}: nothing runs, nothing to do`
          : `removed ${outcome.gone.join(', ')}`,
    }
  },
})

export const ps = defineTool({
  name: 'ps',
  title: "List a checkout's stack containers",
  description:
    "yard ps: the checkout's stack containers. structuredContent: {containers: [{service, container, state, ports: [{host, container}]}]}.",
  input: targetInput,
  readOnly: true,
  async run(args, call) {
    const rows = await stackPs(call.context(), call.backends, args.worktree)
    return {
      data: {containers: rows},
      text: rows.length === 0 ? 'no containers' : rows.map((row) => `${row.service} ${row.state}`).join(', '),
    }
  },
})

/** The most lines `logs` returns: a tool result is read whole, so it is bounded. */
export const LOGS_TAIL_MAX = 2000

export const logs = defineTool({
  name: 'logs',
  title: "Show a checkout's stack logs",
  description: `yard logs (never following): the last \`tail\` lines (at most ${LOGS_TAIL_MAX}) of the checkout's stack logs, all services or those named. structuredContent: {project, boxOnly, tail, lines: [..], total: lines seen}.`,
  input: z
    .object({
      worktree: worktreeArg,
      services: z.array(z.string()).describe('services to show (default: all)').default([]),
      tail: z.number().int().min(1).max(LOGS_TAIL_MAX).describe('how many of the last lines to return').default(100),
    })
    .strict(),
  readOnly: true,
  async run(args, call) {
    const capture = new TailCapture(args.tail, 60_000)
    const outcome = await stackLogs(call.context(capture), call.backends, {
      flag: args.worktree,
      services: args.services,
      follow: false,
    })
    const lines = capture.lines()
    return {
      data: {project: outcome.target.project, boxOnly: outcome.boxOnly, tail: args.tail, lines, total: capture.total},
      text: outcome.boxOnly
        ? `${describeTarget(outcome.target)} is box-only (no compose file): no stack logs`
        : `${lines.length} of ${count(capture.total, 'line')} of ${outcome.target.project}`,
    }
  },
})

export const ports = defineTool({
  name: 'ports',
  title: 'Show offsets and host ports',
  description:
    'yard ports: the offset and host ports of a checkout (worktree), a sandbox, or with all of main, every worktree and every sandbox. structuredContent: the `ports --json` report {worktree, kind, project, offset, offsetSource, ports, clashesWith}; with all: {reports: [..]}.',
  input: z
    .object({
      worktree: worktreeArg,
      all: z.boolean().describe('main, every worktree and every sandbox (WT_OFFSET is ignored)').default(false),
      sandbox: z.string().describe('target this sandbox').optional(),
    })
    .strict(),
  readOnly: true,
  async run(args, call) {
    // The command's exclusive flags (commands/ports.ts), said in the arguments' names.
    if (args.all && args.worktree !== undefined)
      throw new InputError('all and worktree cannot be given together', {fix: 'give one of them'})
    if (args.sandbox !== undefined && (args.all || args.worktree !== undefined))
      throw new InputError(`sandbox cannot be given together with ${args.all ? 'all' : 'worktree'}`, {
        fix: 'give one of them',
      })
    const context = call.context()
    const {sandboxes} = call.worktreeBackends(context)
    if (args.all) {
      const reports = await allPorts(context, sandboxes)
      return {data: {reports}, text: reports.map((report) => `${report.worktree} offset ${report.offset}`).join(', ')}
    }

    const report =
      args.sandbox === undefined
        ? await targetPorts(context, args.worktree, sandboxes)
        : await sandboxPorts(context, call.backends, args.sandbox, sandboxes)
    const list = Object.entries(report.ports)
      .map(([key, port]) => `${key}=${port}`)
      .join(' ')
    return {
      data: {...report},
      text: `${report.worktree} (${report.project}) offset ${report.offset} [${report.offsetSource}]${list ? `: ${list}` : ''}`,
    }
  },
})

export const env = defineTool({
  name: 'env',
  title: "Show a checkout's environment",
  description:
    "yard env --format json: the environment the checkout's stack and box get (WORKTREE, WT_OFFSET, COMPOSE_PROJECT_NAME, the [ports] keys, …). structuredContent: that object.",
  input: targetInput,
  readOnly: true,
  async run(args, call) {
    const context = call.context()
    const {workspace, target} = await resolveTarget(context, args.worktree)
    const variables = stackEnv(target, context, await machineSocketEnv(context, call.backends, workspace, target.name))
    return {
      data: {...variables},
      text: `${count(Object.keys(variables).length, 'variable')} of ${describeTarget(target)}`,
    }
  },
})

export const boxUpTool = defineTool({
  name: 'box_up',
  title: "Start a checkout's box",
  description:
    "yard box up: starts the checkout's dev box (a container on its stack's network with the checkouts mounted) from [box] image, else yard's default image (built first when missing); exec runs commands in it. structuredContent: {project, image, started}.",
  input: targetInput,
  readOnly: false,
  hints: {idempotent: true},
  async run(args, call) {
    const outcome = await boxUp(call.context(), call.backends, args.worktree)
    return {
      data: {project: outcome.target.project, image: outcome.image, started: outcome.started},
      text: `the box of ${describeTarget(outcome.target)} ${outcome.started ? 'started' : 'was already running'} (${outcome.image})`,
    }
  },
})

export const boxDownTool = defineTool({
  name: 'box_down',
  title: "Remove a checkout's box",
  description: "yard box down: removes the checkout's box. structuredContent: {project, removed: [what went]}.",
  input: targetInput,
  readOnly: false,
  hints: {idempotent: true},
  async run(args, call) {
    const outcome = await boxDown(call.context(), call.backends, args.worktree)
    return {
      data: {project: outcome.target.project, removed: outcome.gone},
      text: outcome.gone.length === 0 ? 'no box ran' : `removed ${outcome.gone.join(', ')}`,
    }
  },
})
