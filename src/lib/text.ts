/**
 * How text fields are stored: an empty string clears a field (CONTRACT §5), so it is stored as null.
 */
export function emptyToNull<T extends string | null | undefined>(value: T): T | null {
  return value === '' ? null : value
}
