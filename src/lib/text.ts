/**
 * How text fields are stored and compared: an empty string clears a field (CONTRACT §5), so it is
 * stored as null; and the one fold that search and term names compare by (CONTRACT §3, §5): Unicode
 * NFC normalisation and full case folding, so that `strasse` meets `Straße`, `istanbul` meets
 * `İstanbul`, and a composed and a decomposed `é` are equal. No accent folding.
 */
export function emptyToNull<T extends string | null | undefined>(value: T): T | null {
  return value === '' ? null : value
}

/**
 * NFC, then full case folding: upper-casing first applies the full mappings that make several letters
 * (`ß` → `SS`, `ﬁ` → `FI`, `ŉ` → `ʼN`), lower-casing then folds the rest; the final sigma is folded
 * to `σ` (JavaScript's lower-casing keeps `ς` at the end of a word), and the dot above that `İ` leaves
 * on an `i` is dropped, so that `İstanbul` folds like `Istanbul`. The capital sharp s `ẞ` is taken as
 * `ß` first: it upper-cases to itself and lower-cases to `ß`, so it would fold to `ß` where `ß` folds to
 * `ss` (the only character whose fold folded again differs). NFC again at the end: case mappings may
 * decompose (`ǰ` → `J̌`).
 */
export function foldText(text: string): string {
  return text.normalize('NFC').replace(/ẞ/g, 'ß').toUpperCase().toLowerCase().replace(/ς/g, 'σ').replace(/i\u0307/g, 'i').normalize('NFC')
}

/**
 * The characters other than ASCII whose fold holds ASCII (`ß` → `ss`, `İ` → `i`, `K` KELVIN SIGN → `k`,
 * the `ﬁ` ligatures…), and U+0307, which the fold drops after an `i`: a text without any of them folds
 * its ASCII letters only where they already are, so an ASCII needle can be looked for natively first
 * (see `containsText`). test/search-folding.test.ts recomputes the list over every code point.
 */
export const FOLDS_INTO_ASCII = '\u00df\u0130\u0131\u0149\u017f\u037e\u1e9a\u1fef\u1e9e\u212a\ufb00\ufb01\ufb02\ufb03\ufb04\ufb05\ufb06\u0307'
