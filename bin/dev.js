#!/usr/bin/env -S node --import tsx --no-warnings
// Runs the TypeScript sources directly (oclif maps dist/ to src/ in development).
process.env.NODE_ENV ??= 'development'
const {execute} = await import('@oclif/core')

await execute({development: true, dir: import.meta.url})
