/**
 * Loads the dashboard's screen code so that Ink draws on the terminal also when `CI` (or
 * `CONTINUOUS_INTEGRATION`) is set. Ink decides once, when its module is first evaluated
 * (the is-in-ci package), whether it runs in CI, and then writes no frame until the app exits:
 * a full-screen dashboard started from a shell or tmux pane that inherited `CI=true` stayed
 * blank (docs/dashboard.md, "A blank screen"). The dashboard runs Ink only on a terminal, so it
 * loads Ink with those two variables hidden, and puts them back at once: commands it runs
 * (a shell, `compose up`) still see them. No other yard code loads Ink before this.
 */
const CI_VARIABLES = ['CI', 'CONTINUOUS_INTEGRATION'] as const

/** `import('./dashboard-run.js')` with `CI` and `CONTINUOUS_INTEGRATION` unset while Ink loads. */
export async function loadDashboardScreen(): Promise<typeof import('./dashboard-run.js')> {
  const saved = CI_VARIABLES.map((name) => [name, process.env[name]] as const)
  for (const name of CI_VARIABLES) delete process.env[name]
  try {
    return await import('./dashboard-run.js')
  } finally {
    for (const [name, value] of saved) if (value !== undefined) process.env[name] = value
  }
}
