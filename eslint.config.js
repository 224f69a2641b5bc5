/**
 * The rules that keep the code's shape (docs/architecture.md): no `any`, no promise left floating, no
 * unused code, and imports that follow the layers. Type-aware (the TypeScript project itself), so that
 * a floating promise is seen wherever it comes from.
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
    // The layers (docs/architecture.md): storage and rules know nothing of HTTP or of the handlers.
    files: ['src/repositories/**/*.ts', 'src/lib/**/*.ts', 'src/db/**/*.ts', 'src/contract.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{
          group: ['**/http/*', '**/handlers/*', '**/app.js', '**/server.js'],
          message: 'repositories, lib/, db/ and the contract types may not import http/ or handlers/ (docs/architecture.md)',
        }],
      }],
    },
  },
  {
    // Rules of the contract are plain functions of their arguments: no storage in lib/.
    files: ['src/lib/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['**/http/*', '**/handlers/*', '**/app.js', '**/server.js'], message: 'lib/ may not import http/ or handlers/ (docs/architecture.md)' },
          { group: ['**/repositories/*', '**/db/*', 'kysely', 'better-sqlite3'], message: 'lib/ holds rules, not storage (docs/architecture.md)' },
        ],
      }],
    },
  },
  {
    // http/ holds the cross-cutting concerns of the HTTP layer: handlers and storage are wired by app.ts.
    files: ['src/http/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ group: ['**/handlers/*', '**/repositories/*', '**/db/*'], message: 'http/ may not import handlers, repositories or db/: app.ts wires them (docs/architecture.md)' }],
      }],
    },
  },
  {
    // The webhook dispatcher works beside the requests: it is wired by app.ts and started by server.ts.
    files: ['src/webhooks/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ group: ['**/app.js', '**/server.js'], message: 'webhooks/ may not import app.ts or server.ts (docs/architecture.md)' }],
      }],
    },
  },
  {
    // Migrations are written against `Kysely<any>`, never against the app's types (they never change).
    files: ['src/db/migrations/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
)
