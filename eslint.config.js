/**
 * The rules that keep the code's shape (docs/architecture.md): no `any`, no promise left floating, no
 * unused code. Type-aware (the TypeScript project itself), so that a floating promise is seen wherever
 * it comes from.
 */
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'src/generated/**', '.tap/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      // tap runs the subtests a file declares at its top level: their promises are tap's to await.
      '@typescript-eslint/no-floating-promises': ['error', {
        allowForKnownSafePromises: [{ from: 'package', name: 'PromiseWithSubtest', package: '@tapjs/core' }],
      }],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-unused-expressions': ['error', { allowTernary: true, allowShortCircuit: true }],
      // A variable a teardown reads before the test assigns it stays `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Input checks and their tests match control characters on purpose.
      'no-control-regex': 'off',
      'no-unused-private-class-members': 'error',
    },
  },
  {
    // Migrations are written against `Kysely<any>`, never against the app's types (they never change).
    files: ['src/db/migrations/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
)
