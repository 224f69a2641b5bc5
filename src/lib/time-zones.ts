/**
 * Time zones, built on the `Intl` API only: IANA names (exact for every zone, DST included, because the
 * offsets come from ICU) and WordPress-style manual offsets such as `UTC+2`, `UTC-5`, `UTC+5:30` or
 * `UTC+5.5`. Converts between instants and wall times, both as millisecond counts (see dates.ts).
 *
 * @module
 */

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** WordPress manual offsets: `UTC+2`, `UTC-5`, `UTC+5:30`, `UTC+5.5`, `UTC+0`. */
const MANUAL_OFFSET_RE = /^UTC([+-])(\d{1,2})(?::(\d{2})|\.(\d{1,2}))?$/;

/** WordPress offers −12 … +14 hours; nothing on Earth is further from UTC. */
const MAX_MANUAL_OFFSET = 14 * HOUR;

/** What an IANA name may look like before asking ICU (keeps out raw offsets such as `+05:30`). */
const IANA_NAME_RE = /^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/;

/** Formatter options that yield every wall-clock field of an instant, era included for year ≤ 0. */
export const WALL_FIELDS: Intl.DateTimeFormatOptions = {
  era: 'short',
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
  second: 'numeric',
  hourCycle: 'h23',
};

/** Maps an instant (epoch ms) to the zone's UTC offset at that instant, in ms (wall − UTC). */
export type OffsetAt = (utcMs: number) => number;

/**
 * Memoised `Intl.DateTimeFormat` instances. The one piece of module state, and a pure cache:
 * constructing a formatter costs ~130 µs against ~8 µs for a format, and a list response converts
 * hundreds of dates. Bounded so odd inputs cannot grow it without limit.
 */
const formatterCache = new Map<string, Intl.DateTimeFormat>();
const FORMATTER_CACHE_LIMIT = 512;

/** A cached formatter; throws RangeError for a time zone ICU does not know. */
export function formatter(locale: string, timeZone: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${locale}|${timeZone}|${options.timeZoneName ?? 'wall'}`;
  let f = formatterCache.get(key);
  if (f === undefined) {
    f = new Intl.DateTimeFormat(locale, { ...options, timeZone });
    if (formatterCache.size >= FORMATTER_CACHE_LIMIT) formatterCache.clear();
    formatterCache.set(key, f);
  }
  return f;
}

/** The fixed offset of a manual `UTC±H[:MM|.F]` zone in ms, or null when tz is not one. */
export function manualOffsetMs(tz: string): number | null {
  const m = MANUAL_OFFSET_RE.exec(tz);
  if (m === null) return null;
  const hours = Number(m[2]);
  let minutes = 0;
  if (m[3] !== undefined) {
    minutes = Number(m[3]);
    if (minutes > 59) return null;
  } else if (m[4] !== undefined) {
    // A decimal fraction of an hour (5.5, 5.75): only fractions that make whole minutes.
    const scaled = Number(m[4]) * 60;
    const unit = 10 ** m[4].length;
    if (scaled % unit !== 0) return null;
    minutes = scaled / unit;
  }
  const total = hours * HOUR + minutes * MINUTE;
  if (total > MAX_MANUAL_OFFSET) return null;
  return m[1] === '-' ? -total : total;
}

/** Whether ICU knows tz as a named zone. */
function isIanaZone(tz: string): boolean {
  if (!IANA_NAME_RE.test(tz)) return false;
  try {
    formatter('en-US', tz, WALL_FIELDS);
    return true;
  } catch {
    return false;
  }
}

/**
 * Memoised offset functions per zone, each remembering the offsets it read: per UTC day where the
 * offset holds all day (see constantOverDay), else per instant (second). A pure cache like the
 * formatters. Every list request converts the same day boundaries of the default window, one
 * conversion asks ICU for several offsets (~8 µs each), and a site's occurrences start at many
 * distinct instants but on far fewer days.
 */
const offsetFunctions = new Map<string, OffsetAt>();
const OFFSET_MEMO_LIMIT = 10_000;

/** Days remembered per zone at most: some 27 years of them. */
const DAY_MEMO_LIMIT = 10_000;

/** The instants ICU formats: the years −271,821 … 275,760 (ECMAScript's range). */
const MAX_INSTANT = 8.64e15;

/**
 * The offset a UTC day has throughout, or NaN when it may change within the day (or the day lies at
 * the edge of the representable range). Exact because the tz database never puts two transitions
 * within one day: over 1800–2200 the closest two of any zone are 95.7 hours apart (Africa/Freetown,
 * 1939; `zdump -v -c 1800,2200` over every zone of tzdata 2025b, the changes of offset or of
 * abbreviation alike). So a day holds at most one transition, and a day whose offset is the same at
 * its first and last second holds none that changes the offset: the offset is that one all day. The
 * middle is read as well, as margin: an offset leaving and coming back unseen would then need two
 * transitions within twelve hours. Days with a transition are answered per instant.
 */
function constantOverDay(f: Intl.DateTimeFormat, day: number): number {
  const first = day * DAY;
  const last = first + DAY - SECOND;
  if (!(first >= -MAX_INSTANT && last <= MAX_INSTANT)) return Number.NaN;
  const offset = readOffset(f, first);
  return readOffset(f, first + DAY / 2) === offset && readOffset(f, last) === offset ? offset : Number.NaN;
}

/**
 * The offset function of a zone. Reading the wall fields back from ICU (rather than its offset
 * strings) keeps sub-minute historical offsets such as New York's LMT −4:56:02 exact.
 */
export function offsetFunction(tz: string): OffsetAt {
  let offsetAt = offsetFunctions.get(tz);
  if (offsetAt === undefined) {
    offsetAt = makeOffsetFunction(tz);
    if (offsetFunctions.size >= FORMATTER_CACHE_LIMIT) offsetFunctions.clear();
    offsetFunctions.set(tz, offsetAt);
  }
  return offsetAt;
}

/**
 * Whether tz is one of the tz database's fixed zones: ICU's canonical id `UTC` (`UTC`, `Etc/UTC`, `GMT`, `Zulu`…) or
 * `Etc/…` (`Etc/GMT+5`), zones the database defines with one offset and one abbreviation and no rule, for all time.
 * Their offset and abbreviation are read once (a series in UTC otherwise asked ICU for each day its occurrences fall
 * on, six formats a day first met). A manual `UTC±H` offset is not one (it is answered without ICU).
 * @throws RangeError for a time zone ICU does not know.
 */
export function isFixedZone(tz: string): boolean {
  const canonical = formatter('en-US', tz, WALL_FIELDS).resolvedOptions().timeZone;
  return canonical === 'UTC' || canonical.startsWith('Etc/');
}

function makeOffsetFunction(tz: string): OffsetAt {
  const manual = manualOffsetMs(tz);
  if (manual !== null) return () => manual;
  if (!isIanaZone(tz)) throw new RangeError(`Unknown time zone ${JSON.stringify(tz)}`);
  const f = formatter('en-US-u-ca-gregory-nu-latn', tz, WALL_FIELDS);
  if (isFixedZone(tz)) {
    const fixed = readOffset(f, 0);
    return () => fixed;
  }
  const byDay = new Map<number, number>();
  const memo = new Map<number, number>();
  return (utcMs: number): number => {
    const instant = Math.floor(utcMs / SECOND) * SECOND;
    const day = Math.floor(instant / DAY);
    let allDay = byDay.get(day);
    if (allDay === undefined) {
      allDay = constantOverDay(f, day);
      if (byDay.size >= DAY_MEMO_LIMIT) byDay.delete(byDay.keys().next().value as number);
      byDay.set(day, allDay);
    }
    if (!Number.isNaN(allDay)) return allDay;
    const known = memo.get(instant);
    if (known !== undefined) return known;
    const offset = readOffset(f, instant);
    if (memo.size >= OFFSET_MEMO_LIMIT) memo.clear();
    memo.set(instant, offset);
    return offset;
  };
}

/**
 * The uncached offset of tz at an instant, straight from ICU: what offsetFunction's memos must
 * agree with (the property test compares them).
 */
export function exactOffsetMs(tz: string, utcMs: number): number {
  const manual = manualOffsetMs(tz);
  if (manual !== null) return manual;
  if (!isIanaZone(tz)) throw new RangeError(`Unknown time zone ${JSON.stringify(tz)}`);
  return readOffset(formatter('en-US-u-ca-gregory-nu-latn', tz, WALL_FIELDS), Math.floor(utcMs / SECOND) * SECOND);
}

/** The zone's offset at an instant (whole second), from the wall fields ICU formats for it. */
function readOffset(f: Intl.DateTimeFormat, instant: number): number {
  const fields: Record<string, string> = {};
  for (const part of f.formatToParts(instant)) fields[part.type] = part.value;
  const year = fields.era === 'BC' || fields.era === 'B' ? 1 - Number(fields.year) : Number(fields.year);
  const d = new Date(0);
  d.setUTCFullYear(year, Number(fields.month) - 1, Number(fields.day));
  d.setUTCHours(Number(fields.hour), Number(fields.minute), Number(fields.second), 0);
  return d.getTime() - instant;
}

/**
 * Wall time (ms) → instant (ms) in a zone. Candidate offsets are the ones in force a day before
 * and a day after, each refined by iterating offset(wall − offset) to a fixed point; a candidate is
 * kept only if the zone really has that offset at the resulting instant, so the answer is exact
 * whatever ICU's rules are. Several survivors (fall-back overlap): the earliest instant, i.e. the
 * first occurrence. None (spring-forward gap): the wall time is read with the offset from before
 * the transition, which moves it forward by the length of the gap (02:30 → 03:30 in New York).
 */
export function wallMsToUtcMs(wallMs: number, offsetAt: OffsetAt): number {
  const before = offsetAt(wallMs - DAY);
  const after = offsetAt(wallMs + DAY);
  const candidates = new Set<number>();
  for (const start of [before, after]) {
    let offset = start;
    for (let i = 0; i < 4 && !candidates.has(offset); i++) {
      candidates.add(offset);
      offset = offsetAt(wallMs - offset);
    }
  }
  let best: number | null = null;
  for (const offset of candidates) {
    const utcMs = wallMs - offset;
    if (offsetAt(utcMs) === offset && (best === null || utcMs < best)) best = utcMs;
  }
  return best ?? wallMs - before;
}

/** Instant (ms) → the zone's wall time (ms). */
export function utcMsToWallMs(utcMs: number, offsetAt: OffsetAt): number {
  return utcMs + offsetAt(utcMs);
}

/**
 * Whether tz is a time zone events may use: an IANA name ICU knows (`America/New_York`, `UTC`;
 * matched case-insensitively, as ICU does) or a WordPress manual offset `UTC±H`, `UTC±H:MM`,
 * `UTC±H.F` within −14…+14 hours (`UTC+2`, `UTC-5`, `UTC+5:30`, `UTC+5.5`, `UTC+0`).
 */
export function isValidTimezone(tz: string): boolean {
  return manualOffsetMs(tz) !== null || isIanaZone(tz);
}

/**
 * A valid zone name in the case the tz database writes it (`europe/zurich` → `Europe/Zurich`), for
 * names written once and shown everywhere (the site zone). Only the case changes: an alias stays the
 * alias it is (`Asia/Calcutta`), and a manual offset stays as written.
 */
export function canonicalZoneCase(tz: string): string {
  if (manualOffsetMs(tz) !== null) return tz;
  const resolved = new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  if (resolved.toLowerCase() === tz.toLowerCase()) return resolved;
  const listed = Intl.supportedValuesOf('timeZone').find((name) => name.toLowerCase() === tz.toLowerCase());
  return listed ?? tz;
}
