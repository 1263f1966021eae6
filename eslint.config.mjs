import oclif from 'eslint-config-oclif'
import prettier from 'eslint-config-prettier'
import tseslint from 'typescript-eslint'

// The oclif family's rules, with prettier owning layout (eslint-config-prettier turns off every
// rule prettier decides). Each rule switched off below conflicts with the house style or would need
// a large rewrite that finds no defect; the rules that catch defects (unused code, floating and
// misused promises, awaits of non-promises, thrown non-errors, lost error causes, …) stay on.
export default [
  {
    ignores: ['dist/**', 'examples/**', 'test/fixtures/**', 'coverage/**', 'oclif.manifest.json'],
  },
  ...oclif,
  prettier,
  {
    languageOptions: {
      parserOptions: {
        // One program for src, test and bench: the project service finds only tsconfig.json (src).
        project: './tsconfig.check.json',
        projectService: false,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Key, member and case order carries meaning here (JSON output, help text, the reading order
      // of shapes and schemas, Set iteration); sorting alphabetically would reorder output.
      'perfectionist/sort-classes': 'off',
      'perfectionist/sort-interfaces': 'off',
      'perfectionist/sort-intersection-types': 'off',
      'perfectionist/sort-object-types': 'off',
      'perfectionist/sort-objects': 'off',
      'perfectionist/sort-sets': 'off',
      'perfectionist/sort-switch-case': 'off',
      'perfectionist/sort-union-types': 'off',
      'unicorn/consistent-class-member-order': 'off', // same: members read in the order they run
      // Object shapes are interfaces, as the SDK's contracts are (they extend named capability
      // interfaces); the oclif config's `type` preference would rewrite some 250 declarations.
      '@typescript-eslint/consistent-type-definitions': ['error', 'interface'],
      // `null` is a deliberate value in JSON shapes and React state; the fix would change types.
      '@typescript-eslint/no-restricted-types': 'off',
      // `||` deliberately treats '' and 0 as missing in config and flag defaults.
      '@typescript-eslint/prefer-nullish-coalescing': 'off',
      // Docstrings say what is thrown in prose ("@throws InputError when …"), as STYLE.md asks.
      'jsdoc/require-throws-type': 'off',
      // TypeScript gives the types; a docstring's @yields says what, not the type again.
      'jsdoc/require-yields-type': 'off',
      // Destructured parameters are documented by their fields, which this rule cannot match.
      'jsdoc/check-param-names': 'off',
      // `{@link}`-free prose docstrings mention `@` and `{…}` literally (git's `@{u}`, `^{commit}`).
      'jsdoc/escape-inline-tags': 'off',
      // git revision syntax (`rev^{commit}`) and compose's `${VAR}` are literal text here.
      'no-template-curly-in-string': 'off',
      'unicorn/no-incorrect-template-string-interpolation': 'off',
      // Adding the `u` flag changes what some patterns mean (escapes, classes); no defect found.
      'require-unicode-regexp': 'off',
      // Matching ANSI escapes and NUL-separated git output is what these patterns are for.
      'no-control-regex': 'off',
      // git, podman and lock steps run one after another on purpose.
      'no-await-in-loop': 'off',
      // Renaming every boolean to is/has touches public shapes and JSON output.
      'unicorn/consistent-boolean-name': 'off',
      // Size limits are STYLE.md's (~300-line files, thin commands), not counters per function.
      complexity: 'off',
      'max-depth': 'off',
      'max-nested-callbacks': 'off',
      'max-params': 'off',
      'unicorn/max-nested-calls': 'off',
      // Import cycles are the boundary check's job (.dependency-cruiser.cjs), and slow here.
      'import-x/no-cycle': 'off',
      // `import type {…}` next to a value import of the same module is what consistent-type-imports writes.
      'import-x/no-duplicates': 'off',
      // Callbacks that return nothing useful (`() => void`) and `new Promise((r) => setTimeout(r))`
      // are the idiom for listeners and waits; rewriting 170+ arrow bodies finds nothing.
      '@typescript-eslint/strict-void-return': 'off',
      '@typescript-eslint/no-confusing-void-expression': 'off',
      'no-promise-executor-return': 'off',
      'no-return-assign': 'off',
      'no-void': 'off',
      // No-op callbacks (`warn: () => {}`) are how a caller opts out of a report.
      '@typescript-eslint/no-empty-function': 'off',
      // `.sort()` on a freshly built array is the house idiom; toSorted() would change 100+ lines.
      'unicorn/no-array-sort': 'off',
      '@typescript-eslint/require-array-sort-compare': 'off',
      'unicorn/require-array-sort-compare': 'off',
      // Passing a named function (`.map(toRow)`) reads better; the parseInt hazard is caught by types.
      'unicorn/no-array-callback-reference': 'off',
      // Buffer is a Node global like process (oclif's config asks for the global process too).
      'n/prefer-global/buffer': 'off',
      // Offsets and hashes are integer arithmetic on purpose.
      'no-bitwise': 'off',
      // Records keyed by name (ports, env, labels) are edited with `delete`, the shape compose uses.
      '@typescript-eslint/no-dynamic-delete': 'off',
      'unicorn/no-computed-property-existence-check': 'off',
      // Values read from parsed JSON/YAML are stringified on purpose after a type check upstream.
      '@typescript-eslint/no-base-to-string': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
      // Replacement strings are paths and names with no `$`; the fix would obscure the call.
      'unicorn/no-unsafe-string-replacement': 'off',
      // Loop shapes and conditions chosen for reading order; no defect in what these report.
      'unicorn/no-break-in-nested-loop': 'off',
      'unicorn/no-duplicate-loops': 'off',
      'unicorn/no-return-array-push': 'off',
      'unicorn/prefer-simple-condition-first': 'off',
      'unicorn/no-declarations-before-early-exit': 'off',
      'unicorn/prefer-smaller-scope': 'off',
      // `promise.then(ok, fail)` handles exactly the promise's own rejection, unlike then().catch().
      'unicorn/prefer-then-catch': 'off',
      // catch callbacks narrow with instanceof right away; annotating `: unknown` adds nothing.
      '@typescript-eslint/use-unknown-in-catch-callback-variable': 'off',
      // oclif commands declare `static description = '…'`, oclif's own convention.
      '@typescript-eslint/class-literal-property-style': 'off',
      // Number.isSafeInteger vs isInteger: ports and offsets are bounded before the check.
      'unicorn/prefer-number-is-safe-integer': 'off',
      // Names like `Number(x)` vs unary `+x` are a matter of taste.
      'unicorn/prefer-number-coercion': 'off',
      // The bench and CLI entry scripts end the process on purpose.
      'unicorn/no-process-exit': 'off',
      // Escapes such as `\u001B` match what terminals document.
      'unicorn/prefer-unicode-code-point-escapes': 'off',
      // Values from JSON.parse, YAML and the kubernetes client are `any` by their libraries' types
      // and are checked (zod, type guards) where they are used; typing each hop adds casts, not checks.
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // `{…} as T` on parsed values and fakes' bodies is how the code states a shape it checked.
      '@typescript-eslint/consistent-type-assertions': 'off',
      // `import('…').Type` in a single annotation avoids an import line used once.
      '@typescript-eslint/consistent-type-imports': [
        'error',
        {disallowTypeAnnotations: false, fixStyle: 'inline-type-imports'},
      ],
      // Switches cover the cases that matter and end in a default or fall through on purpose
      // (zod issue codes, completion kinds); the rule demands every member of wide unions.
      '@typescript-eslint/switch-exhaustiveness-check': 'off',
      // Inner names that repeat an outer one (`target`, `line`, `run`) are the natural word there.
      '@typescript-eslint/no-shadow': 'off',
      // `a && a.b` differs from `a?.b` when `a` is '' or 0; the suggestions would change results.
      '@typescript-eslint/prefer-optional-chain': 'off',
      // `Boolean(flags.x)` / `String(v)` state the type where oclif's flag types are loose.
      '@typescript-eslint/no-unnecessary-type-conversion': 'off',
      // Retry and poll loops build closures over the current iteration on purpose.
      '@typescript-eslint/no-loop-func': 'off',
      // Poll loops wait on flags that event handlers set (`while (!exited)`), which the rule cannot see.
      'no-unmodified-loop-condition': 'off',
      // `list.splice(0)` returns what it empties; `for (const x of made.splice(0))` relies on it.
      'unicorn/no-unnecessary-splice': 'off',
      // Closures read a variable before its single assignment (`let api` … `api = …`); those stay `let`.
      'prefer-const': ['error', {destructuring: 'all', ignoreReadBeforeAssign: true}],
      // if/else-if chains over a few values read fine; the switch rewrite leaves blocks no-lone-blocks flags.
      'unicorn/prefer-switch': 'off',
      // YardError's static hasInstance compares with YardError itself; `this` would mean the subclass.
      'unicorn/class-reference-in-static-methods': 'off',
      // Its fix writes findLast(), which the ES2022 lib of tsconfig.json does not declare.
      'unicorn/prefer-array-find': ['error', {checkFromLast: false}],
      // The MCP SDK's Server has onclose/onerror properties, not addEventListener.
      'unicorn/prefer-add-event-listener': 'off',
      // unicorn's taste rules with one to fourteen hits each and no defect among them.
      'unicorn/no-array-from-fill': 'off',
      'unicorn/no-negated-comparison': 'off',
      'unicorn/no-non-function-verb-prefix': 'off',
      'unicorn/no-object-as-default-parameter': 'off',
      'unicorn/no-subtraction-comparison': 'off',
      'unicorn/no-unnecessary-array-flat-map': 'off',
      'unicorn/prefer-array-flat-map': 'off',
      'unicorn/prefer-array-some': 'off',
      'unicorn/prefer-code-point': 'off',
      'unicorn/prefer-else-if': 'off',
      'unicorn/prefer-includes-over-repeated-comparisons': 'off',
      'unicorn/prefer-iterator-to-array': 'off',
      'unicorn/prefer-math-trunc': 'off',
      'unicorn/prefer-minimal-ternary': 'off',
      'unicorn/prefer-promise-try': 'off',
      'unicorn/prefer-single-call': 'off',
      'unicorn/prefer-structured-clone': 'off',
      // `_` and `React` (kept in scope for dev runs of JSX) are deliberate unused names.
      '@typescript-eslint/no-unused-vars': [
        'error',
        {argsIgnorePattern: '^_', ignoreRestSiblings: true, varsIgnorePattern: '^(_+|React)$'},
      ],
    },
  },
  {
    files: ['test/**', 'bench/**'],
    rules: {
      // Tests read JSON output and fakes' bodies as `any`; their assertions are the type check.
      '@typescript-eslint/no-explicit-any': 'off',
      // Test files start fakes and emitters at import time, and EventEmitter is what they fake.
      'unicorn/no-top-level-side-effects': 'off',
      'unicorn/prefer-event-target': 'off',
      '@typescript-eslint/restrict-plus-operands': 'off',
      // A test file groups several suites; support files export helpers.
      'mocha/max-top-level-suites': 'off',
      'mocha/no-exports': 'off',
      // bench/ imports node:path as a namespace, like the scripts it drives.
      'unicorn/import-style': 'off',
    },
  },
  {
    // Plain JavaScript (bin, scripts, fixtures' helpers) is outside the TypeScript program.
    files: ['**/*.{js,mjs,cjs}'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {parserOptions: {project: false, projectService: false}},
    rules: {
      ...tseslint.configs.disableTypeChecked.rules,
      // Config files export their object as the tools document it.
      'import-x/no-anonymous-default-export': 'off',
      // bin/run.js and the import recorder call module APIs behind optional chaining / version checks.
      'n/no-unsupported-features/node-builtins': 'off',
      // The fake kubectl script keeps its terse counters.
      'no-multi-assign': 'off',
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: {globals: {module: 'writable', require: 'readonly'}, sourceType: 'commonjs'},
  },
]
