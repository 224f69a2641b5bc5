/**
 * Loaded into every test process (`--import`, see the `tap` section of package.json): the tests and the
 * sources run on Node's own type stripping. Types become blanks, so every line and column stays where it
 * is (coverage needs no source map) and nothing is compiled; `erasableSyntaxOnly` in tsconfig.json keeps
 * the code within what stripping allows. The sources import each other as `./x.js` (what tsc checks under
 * NodeNext): a relative `.js` of this project that is not there resolves to the `.ts` beside it.
 *
 * Coverage (the first CI leg) counts the test processes only. Their children (servers, the api-key
 * command, scripts, and what scripts start through tsx, whose one-line output would not merge with these
 * files' coverage) are left out: tap's process tracker hands its switch down to them, and it is turned
 * off here for them (`_TAPJS_PROCESSINFO_COVERAGE_=0`, as tap sets it when coverage is off; this process
 * has already decided). Tests start children with the same loader (typescript.ts).
 */
import { existsSync } from 'node:fs'
import { registerHooks } from 'node:module'

registerHooks({
  resolve(specifier, context, nextResolve) {
    const parent = context.parentURL
    if (parent?.startsWith('file:') === true && !parent.includes('/node_modules/') && /^\.\.?\/.*\.js$/.test(specifier)) {
      const source = new URL(`${specifier.slice(0, -3)}.ts`, parent)
      if (existsSync(source)) return nextResolve(source.href, context)
    }
    return nextResolve(specifier, context)
  },
})

process.env._TAPJS_PROCESSINFO_COVERAGE_ = '0'
