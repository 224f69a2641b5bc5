/**
 * `cost_details` of an event (CONTRACT §2): what can be read from the free-text `cost`.
 *
 * The cost is written by people in six languages, so numbers come in both English (`1,000.50`) and
 * continental (`1.000,50`, `10,50 €`, `CHF 25.–`) notation, ranges use hyphens and dashes, and the
 * currency is a symbol, an ISO 4217 code, both or neither. Nothing here fails: text that cannot be
 * read gives nulls and an empty `values`.
 *
 * @module
 */

import type { CostDetails } from '../contract.js';

/** The `cost_details` object of an event record (its shape is the contract's). */
export type { CostDetails };

/**
 * Currency symbols, longest first so that `US$` wins over `$` and `Fr.` over `Fr`. Letter symbols
 * only count as whole words, so `kr` is not found in `Krakow`.
 */
const CURRENCY_SYMBOLS = [
  'US$', 'AU$', 'CA$', 'NZ$', 'HK$', 'MX$', 'NT$', 'A$', 'C$', 'R$', 'S$',
  'Fr.', 'Rs.', 'kr.', 'Kč', 'zł', 'Ft', 'kr', 'Fr', 'Rs', 'lei', 'лв',
  '$', '€', '£', '¥', '₹', '₣', '₩', '₽', '₺', '₪', '₫', '₴', '₦', '₱', '฿', '₡', '₲', '₵', '₸', '₭',
  '₮', '₼', '₾', '₿', '¢', '元', '円',
] as const;

/** Words that mean "no charge" in the site's languages (en, de, es, fr). */
const FREE_WORDS = [
  'free', 'gratis', 'gratuit', 'gratuite', 'gratuito', 'gratuita', 'kostenlos', 'kostenfrei', 'frei',
  'umsonst', 'libre',
] as const;

/**
 * ISO 4217 codes that are also English words: in capitals they are more often shouting than money
 * (`ALL AGES`, `TOP SEATS`), so they count only when written next to a number.
 */
const WORD_LIKE_CODES: ReadonlySet<string> = new Set([
  'ALL', 'BAM', 'BOB', 'CUP', 'GEL', 'MAD', 'MOP', 'PEN', 'SOS', 'TOP', 'TRY',
]);

/** The ISO 4217 codes ICU knows (current currencies only). */
const CURRENCY_CODES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

/**
 * A digit run with the separators that may sit inside one number. A plain space only counts before
 * exactly three digits (`1 000 €`), so that `10 20` stays two numbers.
 */
const GROUPED_NUMBER_RE = /\d+(?:[.,'’\u00A0\u202F]\d+| \d{3}(?!\d))*/g;

/** A `.–`, `,-` … after a number: "and no cents" (`CHF 25.–`, `25,- €`), part of the number. */
const NO_CENTS_RE = /^[.,][-–—](?!\d)/;

/** Space that may stand between a number and its currency (including no-break spaces). */
const GAP_RE = /^[\s\u00A0\u202F]*$/u;

/** A number found in the text: its value(s) and where it stands. */
interface NumberToken {
  start: number;
  end: number;
  values: number[];
}

/** A currency mention (symbol or code) found in the text. */
interface CurrencyMention {
  text: string;
  start: number;
  end: number;
}

/** Escapes a literal for use in a RegExp. */
function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Symbol finder: letter symbols must not touch other letters; others may touch anything. */
const SYMBOL_RE = new RegExp(
  CURRENCY_SYMBOLS.map((s) => (/^\p{L}/u.test(s) ? `(?<!\\p{L})${escapeRegExp(s)}(?![\\p{L}])` : escapeRegExp(s))).join('|'),
  'gu',
);

/** Three capital letters that are not part of a longer word. */
const CODE_RE = /(?<!\p{L})[A-Z]{3}(?!\p{L})/gu;

/** Free words as whole words, any case. */
const FREE_RE = new RegExp(`(?<![\\p{L}\\p{N}])(?:${FREE_WORDS.join('|')})(?![\\p{L}\\p{N}])`, 'iu');

/**
 * Reads one digit run with separators. Apostrophes and spaces only group thousands;
 * with both `.` and `,`, the last one is the decimal mark; a lone `.` or `,` followed by exactly
 * three digits groups thousands (`1.000`, `1,000`) unless the number starts with `0` (`0.500`),
 * otherwise it is the decimal mark (`10,50`, `25.5`). Separators that cannot be read as grouping
 * (`10,20,30`, `1.2.3`) split the run into separate numbers.
 */
function readNumber(raw: string): number[] {
  const parts = raw.split(/([.,'’ \u00A0\u202F])/);
  const groups = parts.filter((_, i) => i % 2 === 0);
  const seps = parts.filter((_, i) => i % 2 === 1);
  if (seps.length === 0) return [Number(raw)];
  const last = seps[seps.length - 1] ?? '';
  const first = groups[0] ?? '';
  const tail = groups[groups.length - 1] ?? '';
  const hasDot = seps.includes('.');
  const hasComma = seps.includes(',');
  let decimalMark: string | null = null;
  if (hasDot && hasComma) {
    decimalMark = last;
  } else if ((last === '.' || last === ',') && seps.filter((s) => s === last).length === 1) {
    decimalMark = tail.length === 3 && first !== '0' ? null : last;
  }
  // Everything but the decimal part must be thousands grouping: 1–3 digits, then groups of 3.
  const intGroups = decimalMark === null ? groups : groups.slice(0, -1);
  const intSeps = decimalMark === null ? seps : seps.slice(0, -1);
  const grouped =
    (intGroups[0] ?? '').length <= 3 &&
    intGroups.slice(1).every((g) => g.length === 3) &&
    (decimalMark === null || !intSeps.includes(decimalMark));
  if (!grouped) return groups.map(Number);
  const integer = intGroups.join('');
  return [Number(decimalMark === null ? integer : `${integer}.${tail}`)];
}

/** Every number in the text, in order of appearance, with its span (a trailing `.–` included). */
function findNumbers(text: string): NumberToken[] {
  const tokens: NumberToken[] = [];
  for (const m of text.matchAll(GROUPED_NUMBER_RE)) {
    const start = m.index;
    let end = start + m[0].length;
    const noCents = NO_CENTS_RE.exec(text.slice(end));
    if (noCents !== null) end += noCents[0].length;
    // A minus sign right before the number keeps its sign (`-5`, `$-5`, `Discount −5`), unless a number
    // comes just before it: then it joins a range (`10-20`, `10 -20`).
    const before = text.slice(0, start);
    const signed = /[-\u2212]$/.test(before) && !/\d\s*[-\u2212]$/.test(before);
    const values = readNumber(m[0]);
    tokens.push({ start, end, values: signed ? values.map((v, i) => (i === 0 ? -v : v)) : values });
  }
  return tokens;
}

/** Every match of a global RegExp as a mention. */
function findMentions(text: string, re: RegExp): CurrencyMention[] {
  return [...text.matchAll(re)].map((m) => ({ text: m[0], start: m.index, end: m.index + m[0].length }));
}

/** Whether a mention stands right before or right after a number, with only space between. */
function isNextToNumber(mention: CurrencyMention, numbers: readonly NumberToken[], text: string): boolean {
  return numbers.some(
    (n) =>
      (n.start >= mention.end && GAP_RE.test(text.slice(mention.end, n.start))) ||
      (n.end <= mention.start && GAP_RE.test(text.slice(n.end, mention.start))),
  );
}

/**
 * The ISO 4217 code written in the text: the first one next to a number, else the first one
 * anywhere that is not also an English word.
 */
function findCode(text: string, numbers: readonly NumberToken[]): CurrencyMention | null {
  const codes = findMentions(text, CODE_RE).filter((c) => CURRENCY_CODES.has(c.text));
  return (
    codes.find((c) => isNextToNumber(c, numbers, text)) ?? codes.find((c) => !WORD_LIKE_CODES.has(c.text)) ?? null
  );
}

/** Reads the currency and the numbers out of an event's free-text cost. */
export function costDetails(cost: string | null): CostDetails {
  const text = cost ?? '';
  const numbers = findNumbers(text);
  const values = [...new Set(numbers.flatMap((n) => n.values))].filter(Number.isFinite).sort((a, b) => a - b);
  if (values.length === 0 && FREE_RE.test(text)) values.push(0);

  const symbol = findMentions(text, SYMBOL_RE).find((s) => isNextToNumber(s, numbers, text)) ?? null;
  const code = findCode(text, numbers);
  const anchor = symbol ?? code;
  const firstNumber = numbers[0];
  let position: CostDetails['currency_position'] = null;
  if (anchor !== null && firstNumber !== undefined) position = anchor.start < firstNumber.start ? 'prefix' : 'postfix';

  return {
    currency_symbol: symbol?.text ?? null,
    currency_code: code?.text ?? null,
    currency_position: position,
    values,
  };
}
