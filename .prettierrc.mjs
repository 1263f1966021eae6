import oclif from '@oclif/prettier-config'

// The oclif family's settings, pinned to the style the code already has.
export default {...oclif, bracketSpacing: false, printWidth: 120, semi: false, singleQuote: true}
