/**
 * The YAML parser, loaded on first use: a server started from the build reads the contract from its
 * JSON cache (see `loadSpec`) and need not load the parser's 70 modules at all.
 */
import { createRequire } from 'node:module'

type Yaml = typeof import('yaml')

let yaml: Yaml | undefined

function load(): Yaml {
  yaml ??= createRequire(import.meta.url)('yaml') as Yaml
  return yaml
}

/** `parse` from the `yaml` package (the same module instance an `import 'yaml'` gets). */
export function parseYaml(text: string): unknown {
  return load().parse(text)
}

/** `stringify` from the `yaml` package, lines never folded. */
export function stringifyYaml(value: unknown): string {
  return load().stringify(value, { lineWidth: 0 })
}
