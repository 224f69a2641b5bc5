/**
 * Slugs (CONTRACT §5): `[a-z0-9-]`, at most 200 characters, made from a title or name by lower-casing,
 * folding to ASCII and joining words with hyphens.
 */
export const MAX_SLUG_LENGTH = 200

/** Letters that Unicode decomposition does not reduce to ASCII. */
const FOLDS: Record<string, string> = {
  ß: 'ss', ẞ: 'ss', æ: 'ae', Æ: 'ae', œ: 'oe', Œ: 'oe', ø: 'o', Ø: 'o', đ: 'd', Đ: 'd', ð: 'd', Ð: 'd',
  þ: 'th', Þ: 'th', ł: 'l', Ł: 'l', ı: 'i', ħ: 'h', Ħ: 'h', ŋ: 'ng', Ŋ: 'ng', ĸ: 'k', ſ: 's',
}

/** German umlauts fold to two letters (Jänner → jaenner), as German-speaking readers expect. */
const UMLAUTS: Record<string, string> = { ä: 'ae', ö: 'oe', ü: 'ue', Ä: 'ae', Ö: 'oe', Ü: 'ue' }

export function slugify(text: string): string {
  const folded = text
    .replace(/[äöüÄÖÜ]/g, (c) => UMLAUTS[c] ?? c)
    .replace(/\P{ASCII}/gu, (c) => FOLDS[c] ?? c)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
  const slug = folded
    .replace(/&/g, '-')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
  return trimSlug(slug, MAX_SLUG_LENGTH)
}

/** A slug from the explicit one, else from the name; `<singular>-<id>` comes later when nothing is left. */
export function wantedSlug(explicit: string | undefined, name: string): string {
  return slugify(explicit ?? '') || slugify(name)
}

/** Cuts a slug to `max` characters without leaving a trailing hyphen. */
export function trimSlug(slug: string, max: number): string {
  return slug.length <= max ? slug : slug.slice(0, max).replace(/-+$/g, '')
}

/**
 * The first of `base`, `base-2`, `base-3` … that `taken` does not hold, still within the length limit.
 * `taken` holds the slugs already used that start with `base`.
 */
export function uniqueSlug(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base
  for (let n = 2; ; n++) {
    const suffix = `-${n}`
    const candidate = trimSlug(base, MAX_SLUG_LENGTH - suffix.length) + suffix
    if (!taken.has(candidate)) return candidate
  }
}
