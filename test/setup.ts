// oclif maps dist/ to src/ only in development or test mode (DESIGN.md §9).
process.env.NODE_ENV = 'test'
