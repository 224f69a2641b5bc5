/**
 * The size and seed of the property-based files (stateful, fuzz, changes-sync, cache-differential) on a
 * leg: `TEST_PROPERTY_PERCENT` (default 100) scales their runs, and `TEST_PROPERTY_SEED_SHIFT` (default 0)
 * moves every seed, so that a leg running a share of the runs checks cases another leg does not (CI,
 * .ci/run: the legs split the runs between them, each on a seed of its own, instead of repeating them).
 * Each file prints the seed and runs it used; a file's own variables (STATEFUL_RUNS, …) still win.
 */
function numberFrom(name: string, fallback: number, check: (n: number) => boolean): number {
  const text = process.env[name]
  if (text === undefined || text === '') return fallback
  const value = Number(text)
  if (!check(value)) throw new Error(`${name} must be ${name === 'TEST_PROPERTY_PERCENT' ? 'an integer from 1 to 100' : 'an integer'}, got ${text}`)
  return value
}

const PERCENT = numberFrom('TEST_PROPERTY_PERCENT', 100, (n) => Number.isInteger(n) && n >= 1 && n <= 100)
const SEED_SHIFT = numberFrom('TEST_PROPERTY_SEED_SHIFT', 0, Number.isInteger)

/** `full` runs scaled to this leg's share (at least one). */
export function propertyRuns(full: number): number {
  return Math.max(1, Math.round((full * PERCENT) / 100))
}

/** `seed` moved by this leg's shift. */
export function propertySeed(seed: number): number {
  return seed + SEED_SHIFT
}

/** A seeded generator (mulberry32): the same numbers in [0, 1) for the same seed, on every machine. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = a
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}
