/**
 * Time zone abbreviations as the tz database writes them (`EST`, `CEST`, `+03`), for `timezone_abbr`.
 *
 * @module
 */
import { pad, requireDateTimeMs } from './dates.js';
import { DAY, MINUTE, SECOND, WALL_FIELDS, exactOffsetMs, formatter, isFixedZone, manualOffsetMs } from './time-zones.js';

/**
 * English locales tried in order for a lettered abbreviation. ICU only gives letters (`CET`, `IST`)
 * where a locale commonly uses them, so the union of these covers the tz-database abbreviations of
 * the Americas, Europe, Africa, India, Australia and parts of Asia; the order was chosen against the
 * tz database (2025) so that the first lettered answer is the tz-database one.
 */
const ABBREVIATION_LOCALES = [
  'en-US',
  'en-GB',
  'en-IN',
  'en-AU',
  'en-ZA',
  'en-IE',
  'en-HK',
  'en-CA',
  'en-ID',
  'en-GU',
] as const;

/**
 * Canonical zones for which CLDR invents letters (`LHST`, `GST`, `ACWST`…) but the tz database
 * writes the numeric form; for these the numeric form wins.
 */
const NUMERIC_ABBREVIATION_ZONES: ReadonlySet<string> = new Set([
  'America/Miquelon',
  'Antarctica/Casey',
  'Antarctica/Troll',
  'Asia/Colombo',
  'Asia/Dubai',
  'Asia/Muscat',
  'Australia/Eucla',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
]);

/**
 * Lettered tz-database abbreviations that none of the locales above yields, for widely used zones:
 * [standard name, standard offset in minutes, daylight name (one hour ahead) if the zone uses one].
 * Applied only when the offset matches, so historical offsets still get the numeric form.
 */
const LETTER_ABBREVIATIONS: Readonly<Record<string, readonly [string, number, string?]>> = {
  'America/Dawson': ['MST', -420],
  'America/Havana': ['CST', -300, 'CDT'],
  'America/Hermosillo': ['MST', -420],
  'America/Mazatlan': ['MST', -420],
  'America/Whitehorse': ['MST', -420],
  'Asia/Jerusalem': ['IST', 120, 'IDT'],
  'Asia/Karachi': ['PKT', 300],
  'Asia/Macau': ['CST', 480],
  'Asia/Manila': ['PST', 480],
  'Asia/Pyongyang': ['KST', 540],
  'Asia/Seoul': ['KST', 540],
  'Asia/Shanghai': ['CST', 480],
  'Asia/Taipei': ['CST', 480],
  'Asia/Tokyo': ['JST', 540],
  'Europe/Guernsey': ['GMT', 0, 'BST'],
  'Europe/Isle_of_Man': ['GMT', 0, 'BST'],
  'Europe/Jersey': ['GMT', 0, 'BST'],
  'Europe/Kirov': ['MSK', 180],
  'Europe/Moscow': ['MSK', 180],
  'Europe/Simferopol': ['MSK', 180],
  'Europe/Volgograd': ['MSK', 180],
  'Pacific/Midway': ['SST', -660],
  'Pacific/Pago_Pago': ['SST', -660],
  'Pacific/Saipan': ['ChST', 600],
};

/** CLDR letters that the tz database spells differently (America/Adak). */
const ABBREVIATION_RENAMES: Readonly<Record<string, string>> = { HAST: 'HST', HADT: 'HDT' };

/** Formats an offset the tz-database way: `+03`, `-0330`, `+0545`. */
function numericAbbreviation(offsetMs: number): string {
  const sign = offsetMs < 0 ? '-' : '+';
  const totalMinutes = Math.abs(offsetMs) / MINUTE;
  const hours = Math.floor(totalMinutes / 60);
  const minutes = totalMinutes % 60;
  return `${sign}${pad(hours)}${minutes === 0 ? '' : pad(minutes)}`;
}

/**
 * The tz-database style abbreviation of tz at the UTC instant: letters where ICU gives them in one
 * of a few English locales (`EST`/`EDT`, `CET`/`CEST`, `GMT`/`BST`, `IST`, `AEST`, `UTC`), otherwise
 * the numeric form the tz database uses (`+03`, `-0330`, `+1030`); `LMT` for local mean time
 * (offsets with seconds). A manual offset zone is its own abbreviation (`UTC+2`), as in WordPress.
 * @throws RangeError for a malformed date-time or an unknown zone.
 */
export function tzAbbreviation(tz: string, utc: string): string {
  return tzAbbreviationAt(tz, requireDateTimeMs(utc, 'tzAbbreviation'))
}

/** `tzAbbreviation` of the instant `utcMs` (ms of a whole second; a list's occurrences have their dates as numbers). */
export function tzAbbreviationAt(tz: string, utcMs: number): string {
  // A pure function of its arguments (and of the process's ICU data), and costly (several formatters
  // asked per call): remembered, boundedly, per zone and UTC day where the day has one abbreviation
  // throughout (see sameAllDay), else per zone and instant. Events of a site share zones, and their
  // occurrences start at many distinct instants but on far fewer days.
  const fixed = fixedAbbreviation(tz)
  if (fixed !== null) return fixed
  const day = Math.floor(utcMs / DAY)
  const dayKey = `${tz}\u0000${day}`
  let allDay = rememberedDays.get(dayKey)
  if (allDay === undefined) {
    allDay = sameAllDay(tz, day)
    if (rememberedDays.size >= REMEMBERED_DAYS) rememberedDays.delete(rememberedDays.keys().next().value as string)
    rememberedDays.set(dayKey, allDay)
  }
  if (allDay !== null) return allDay
  const key = `${tz}\u0000${utcMs}`
  let abbreviation = remembered.get(key)
  if (abbreviation === undefined) {
    abbreviation = computeAbbreviation(tz, utcMs)
    if (remembered.size >= REMEMBERED) remembered.delete(remembered.keys().next().value as string)
    remembered.set(key, abbreviation)
  }
  return abbreviation
}

/** The abbreviation of each fixed zone met (time-zones.ts `isFixedZone`: one for all time), null for the others. */
const fixedAbbreviations = new Map<string, string | null>()

function fixedAbbreviation(tz: string): string | null {
  let known = fixedAbbreviations.get(tz)
  if (known === undefined) {
    known = manualOffsetMs(tz) === null && isFixedZone(tz) ? computeAbbreviation(tz, 0) : null
    if (fixedAbbreviations.size >= REMEMBERED) fixedAbbreviations.clear()
    fixedAbbreviations.set(tz, known)
  }
  return known
}

/** Abbreviations remembered at most per instant, and per day (the oldest forgotten first). */
const REMEMBERED = 10_000
/** Some 27 years of days for each of five zones (a few MB at most). */
const REMEMBERED_DAYS = 50_000
const remembered = new Map<string, string>()
const rememberedDays = new Map<string, string | null>()

/** The instants ICU formats: the years −271,821 … 275,760 (ECMAScript's range). */
const MAX_INSTANT = 8.64e15

/**
 * The abbreviation tz has throughout a UTC day, or null when it may change within the day (or the
 * day lies at the edge of the representable range). The abbreviation is a function of the zone's
 * offset and of the names ICU gives the zone at the instant (its CLDR metazone). Offsets: the tz
 * database never puts two transitions within one day (the closest two of any zone over 1800–2200 are
 * 95.7 hours apart, see constantOverDay in time-zones.ts; changes of abbreviation alone counted too).
 * Names: CLDR's metazone periods last years (not proved here for every zone: the property test checks
 * the neighbourhoods of transitions and random instants). So a day holds at most one change, and a
 * day with the same abbreviation at its first and last second holds none. The middle is read as well,
 * as margin: a name leaving and coming back unseen would need two changes within twelve hours.
 * test/tz-day-memo.test.ts compares the memo with computeAbbreviation around every transition of
 * thirteen zones in 2020–2030 and at random instants of 1900–2100.
 */
function sameAllDay(tz: string, day: number): string | null {
  const first = day * DAY
  const last = first + DAY - SECOND
  if (!(first >= -MAX_INSTANT && last <= MAX_INSTANT)) return null
  const abbreviation = computeAbbreviation(tz, first)
  return computeAbbreviation(tz, first + DAY / 2) === abbreviation && computeAbbreviation(tz, last) === abbreviation
    ? abbreviation
    : null
}

/** The uncached abbreviation of tz at an instant (ms), straight from ICU: what the memos must agree with. */
export function exactAbbreviation(tz: string, utcMs: number): string {
  return computeAbbreviation(tz, Math.floor(utcMs / SECOND) * SECOND)
}

function computeAbbreviation(tz: string, utcMs: number): string {
  if (manualOffsetMs(tz) !== null) return tz;
  const offsetMs = exactOffsetMs(tz, utcMs);
  if (offsetMs % MINUTE !== 0) return 'LMT';
  const canonical = formatter('en-US', tz, WALL_FIELDS).resolvedOptions().timeZone;
  if (NUMERIC_ABBREVIATION_ZONES.has(tz) || NUMERIC_ABBREVIATION_ZONES.has(canonical)) return numericAbbreviation(offsetMs);
  for (const locale of ABBREVIATION_LOCALES) {
    const parts = formatter(locale, tz, { timeZoneName: 'short' }).formatToParts(utcMs);
    const name = parts.find((p) => p.type === 'timeZoneName')?.value ?? '';
    if (/^[A-Za-z]{2,6}$/.test(name)) return ABBREVIATION_RENAMES[name] ?? name;
  }
  const letters = LETTER_ABBREVIATIONS[tz] ?? LETTER_ABBREVIATIONS[canonical];
  if (letters !== undefined) {
    const [standard, standardMinutes, daylight] = letters;
    if (offsetMs === standardMinutes * MINUTE) return standard;
    if (daylight !== undefined && offsetMs === (standardMinutes + 60) * MINUTE) return daylight;
  }
  return numericAbbreviation(offsetMs);
}
