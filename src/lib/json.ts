/**
 * Parsed JSON (and YAML) is `unknown` until narrowed: this is the one narrowing to an object.
 */
export type Json = Record<string, unknown>

/** Whether a parsed value is an object (not null, not an array). */
export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
