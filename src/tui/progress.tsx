/**
 * A long use case's progress on a terminal (sdk/progress.ts; chosen by progress-renderer.ts):
 * Ink draws the steps done, the current one with a spinner, and a bar with counts, bytes and
 * rate when the tool reports them. Ink redraws and erases its frame (no escape codes of ours);
 * the spinner's frames are cli-spinners' `dots`.
 */
import spinners from 'cli-spinners'
import {Box, render, Text} from 'ink'
// React in scope: dev runs transpile JSX without this tsconfig when started from another directory.
import React, {useEffect, useState} from 'react'

import type {ProgressUpdate} from '../sdk/progress.js'
import type {ProgressRenderer} from './progress-renderer.js'

import {terminalSafe} from '../sdk/errors.js'

/** What the screen shows: the steps done with their seconds (a note has none), the current step and its update. */
export interface ProgressState {
  done: Array<{name: string; seconds?: number}>
  current?: {name: string; started: number; update?: ProgressUpdate}
  failed?: boolean
  ended?: boolean
}

const BAR_WIDTH = 24

/** `  45% ██████████░░░░░░░░░░░░░░ 4500/10000 objects, 1.20 MiB, 2.40 MiB/s` (no bar without a total). */
export function progressLine(update: ProgressUpdate): string {
  const counts =
    update.total === undefined ? `${update.done} ${update.unit}` : `${update.done}/${update.total} ${update.unit}`
  const extra = [update.bytes, update.rate].filter(Boolean).join(', ')
  const tail = `${counts}${extra ? `, ${extra}` : ''}`
  if (update.total === undefined || update.total === 0) return tail
  const ratio = Math.min(Math.max(update.done / update.total, 0), 1)
  const filled = Math.round(ratio * BAR_WIDTH)
  return `${String(Math.floor(ratio * 100)).padStart(3)}% ${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)} ${tail}`
}

function Spinner() {
  const {frames, interval} = spinners.dots
  const [frame, setFrame] = useState(0)
  useEffect(() => {
    const timer = setInterval(() => setFrame((index) => (index + 1) % frames.length), interval)
    return () => clearInterval(timer)
  }, [frames.length, interval])
  return <Text color="cyan">{frames[frame]}</Text>
}

/** The frame: one line per step done, then the current step (spinner, phase) and its bar. */
export function ProgressView({state}: {state: ProgressState}) {
  const {current} = state
  return (
    <Box flexDirection="column">
      {state.done.map((step, index) =>
        step.seconds === undefined ? (
          <Text key={`done:${index}`}>{step.name}</Text>
        ) : (
          <Text key={`done:${index}`} wrap="truncate">
            <Text color="green">✓</Text> {step.name} <Text dimColor>{step.seconds.toFixed(1)} s</Text>
          </Text>
        ),
      )}
      {current === undefined ? null : state.ended ? (
        <Text wrap="truncate">
          <Text color="red">✗</Text> {current.name}
        </Text>
      ) : (
        <>
          <Text wrap="truncate">
            <Spinner /> {current.name}
            {current.update?.phase ? <Text dimColor>: {current.update.phase}</Text> : null}
          </Text>
          {current.update ? <Text wrap="truncate"> {progressLine(current.update)}</Text> : null}
        </>
      )}
    </Box>
  )
}

/** Moves the state on: a new step ends the current one. Pure; `now` in ms. */
export function nextState(
  state: ProgressState,
  event: {step: string} | {update: ProgressUpdate} | {note: string} | {done: true} | {end: 'done' | 'failed'},
  now: number,
): ProgressState {
  const finish = () =>
    state.current
      ? [...state.done, {name: state.current.name, seconds: (now - state.current.started) / 1000}]
      : state.done
  if ('step' in event) return {done: finish(), current: {name: event.step, started: now}}
  if ('done' in event) return {done: finish()}
  if ('note' in event) return {...state, done: [...state.done, {name: event.note}]}
  if ('update' in event) return state.current ? {...state, current: {...state.current, update: event.update}} : state
  if (event.end === 'done') return {done: finish(), ended: true}
  return {...state, failed: true, ended: true}
}

/** Ink on `stream` (a terminal): redrawn on every step and update, the last frame kept. */
export function terminalProgress(stream: NodeJS.WriteStream, now: () => number = Date.now): ProgressRenderer {
  let state: ProgressState = {done: []}
  let instance: ReturnType<typeof render> | undefined
  const draw = (event: Parameters<typeof nextState>[1]) => {
    state = nextState(state, event, now())
    const view = <ProgressView state={state} />
    // Mounted at the first step, not before: a command that reports nothing draws nothing.
    if (instance) instance.rerender(view)
    else
      instance = render(view, {
        stdout: stream,
        stderr: stream,
        patchConsole: false,
        exitOnCtrlC: false,
        interactive: true,
      })
  }

  return {
    step: (name) => draw({step: terminalSafe(name)}),
    update(update) {
      if (instance) draw({update})
    },
    done() {
      if (instance) draw({done: true})
    },
    note(text) {
      if (!instance) return false
      draw({note: text})
      return true
    },
    end(outcome) {
      if (!instance) return
      draw({end: outcome})
      // Ink flushes the last frame within unmount, and leaves it on the screen.
      instance.unmount()
      instance = undefined
      // Steps after an end (a command that reports again) start a new frame.
      state = {done: []}
    },
  }
}
