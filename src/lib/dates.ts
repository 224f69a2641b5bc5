/**
 * Dates and time zones for the events API, built on the `Intl` API only.
 *
 * Every date string here is `'YYYY-MM-DD HH:MM:SS'` (zero-padded, 24 h) and every day string is
 * `'YYYY-MM-DD'`, the formats the records use (CONTRACT §2). Years are limited to 0001–9999 so that
 * the strings stay four-digit and compare correctly as text. Internally a date-time is handled as a
 * millisecond count: an *instant* is milliseconds since the epoch; a *wall time* is the same count
 * computed as if the wall clock fields were UTC, so that plain arithmetic works on both.
 *
 * Time zones and their offsets are time-zones.ts's; their abbreviations tz-abbreviation.ts's.
 *
 * @module
 */

import type { DateDetails } from '../contract.js';
import { DAY, HOUR, MINUTE, SECOND, offsetFunction, utcMsToWallMs, wallMsToUtcMs, type OffsetAt } from './time-zones.js';

/** A query filter date resolved to an instant, with the site-local day it falls on (for widening). */
export interface FilterDate {
  /** The instant, `'YYYY-MM-DD HH:MM:SS'` in UTC. */
  utc: string;
  /** The site-time-zone calendar day of that instant, `'YYYY-MM-DD'`. */
  localDay: string;
}


/** 0001-01-01 00:00:00 and 9999-12-31 23:59:59 as epoch milliseconds: the representable range. */
const MIN_MS = new Date(0).setUTCFullYear(1, 0, 1);
const MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59);

/** Canonical record format; anything else is rejected by the strict parsers. */
const DATE_TIME_RE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * Input date forms shared by bodies and filters: a day, optionally a time after `T` or a space,
 * optional seconds with an optional fraction, and an optional `Z` or numeric offset.
 * Groups: 1-3 date, 4-6 time, 7 fraction, 8 offset.
 */
const INPUT_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;





/** Left-pads a non-negative integer with zeros. */
export function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** Gregorian leap-year rule. */
function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** Days in a month of a given year (month 1–12). */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * Date-time fields → milliseconds as if they were UTC, or null when a field is out of range
 * (month 13, 2025-02-30, 24:00, second 60, year 0 or 10000). `setUTCFullYear` is used because
 * `Date.UTC` maps years 0–99 to 1900–1999.
 */
function fieldsToMs(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number | null {
  if (![year, month, day, hour, minute, second].every(Number.isInteger)) return null;
  if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return d.getTime();
}

/** Milliseconds → `'YYYY-MM-DD HH:MM:SS'` of the UTC fields (sub-second part dropped). */
function msToString(ms: number): string {
  const d = new Date(ms);
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  );
}

/** Whether a millisecond value lies within 0001-01-01 00:00:00 … 9999-12-31 23:59:59. */
function inRange(ms: number): boolean {
  return Number.isFinite(ms) && ms >= MIN_MS && ms < MAX_MS + SECOND;
}

/** Floors to a whole second, so that every value the module hands out has no fraction. */
function floorSecond(ms: number): number {
  return Math.floor(ms / SECOND) * SECOND;
}

/** Strict `'YYYY-MM-DD HH:MM:SS'` → milliseconds, or null. */
function parseDateTimeMs(s: string): number | null {
  const m = DATE_TIME_RE.exec(s);
  if (m === null) return null;
  return fieldsToMs(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
}

/** Strict `'YYYY-MM-DD'` → milliseconds of its midnight, or null. */
function parseDayMs(s: string): number | null {
  const m = DAY_RE.exec(s);
  if (m === null) return null;
  return fieldsToMs(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** Like parseDateTimeMs but throws: for values the caller promises are well-formed. */
export function requireDateTimeMs(s: string, what: string): number {
  const ms = parseDateTimeMs(s);
  if (ms === null) throw new RangeError(`${what}: expected 'YYYY-MM-DD HH:MM:SS' (years 0001-9999), got ${JSON.stringify(s)}`);
  return ms;
}

/** Like parseDayMs but throws. */
function requireDayMs(s: string, what: string): number {
  const ms = parseDayMs(s);
  if (ms === null) throw new RangeError(`${what}: expected 'YYYY-MM-DD' (years 0001-9999), got ${JSON.stringify(s)}`);
  return ms;
}



/** The instant at which a site-local day starts, in ms (past any gap at midnight). */
function startOfDayMs(dayMs: number, offsetAt: OffsetAt): number {
  return wallMsToUtcMs(dayMs, offsetAt);
}

/** Clamps to the representable range, for day boundaries at its very edges. */
function clampToRange(ms: number): number {
  return Math.min(Math.max(ms, MIN_MS), MAX_MS);
}


/** Formats an offset as ISO 8601 `±HH:MM`. */
function isoOffset(offsetMs: number): string {
  const sign = offsetMs < 0 ? '-' : '+';
  const totalMinutes = Math.abs(offsetMs) / MINUTE;
  return `${sign}${pad(Math.floor(totalMinutes / 60))}:${pad(totalMinutes % 60)}`;
}

/** `Z`, `±HH`, `±HHMM`, `±HH:MM` → offset ms, or null when out of range (hours ≤ 23, minutes ≤ 59). */
function parseOffsetMs(s: string): number | null {
  if (s === 'Z' || s === 'z') return 0;
  const digits = s.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  if (hours > 23 || minutes > 59) return null;
  const total = hours * HOUR + minutes * MINUTE;
  return s.startsWith('-') ? -total : total;
}

/**
 * Parses the shared input forms (see INPUT_RE) to an instant in ms, reading values without an
 * offset as wall time in tz. Null when malformed, impossible or outside years 0001–9999.
 */
function parseInputMs(value: string, offsetAt: OffsetAt): number | null {
  const m = INPUT_RE.exec(value);
  if (m === null) return null;
  const [, y, mo, d, h, mi, s, , offset] = m;
  const wallMs = fieldsToMs(Number(y), Number(mo), Number(d), Number(h ?? 0), Number(mi ?? 0), Number(s ?? 0));
  if (wallMs === null) return null;
  let utcMs: number;
  if (offset !== undefined) {
    const offsetMs = parseOffsetMs(offset);
    if (offsetMs === null) return null;
    utcMs = wallMs - offsetMs;
  } else {
    utcMs = wallMsToUtcMs(wallMs, offsetAt);
  }
  return inRange(utcMs) ? utcMs : null;
}


/**
 * Converts a wall time in tz to UTC. A time skipped by a spring-forward change is moved forward
 * by the gap; a time repeated by a fall-back change means its first occurrence.
 * @throws RangeError for a malformed date-time, an unknown zone, or a result outside 0001–9999.
 */
export function wallToUtc(wall: string, tz: string): string {
  const wallMs = requireDateTimeMs(wall, 'wallToUtc');
  const utcMs = wallMsToUtcMs(wallMs, offsetFunction(tz));
  if (!inRange(utcMs)) throw new RangeError(`wallToUtc: ${wall} in ${tz} is outside years 0001-9999 in UTC`);
  return msToString(utcMs);
}

/**
 * Converts a UTC date-time to the wall time in tz.
 * @throws RangeError for a malformed date-time, an unknown zone, or a result outside 0001–9999.
 */
export function utcToWall(utc: string, tz: string): string {
  const utcMs = requireDateTimeMs(utc, 'utcToWall');
  const wallMs = utcMsToWallMs(utcMs, offsetFunction(tz));
  if (!inRange(wallMs)) throw new RangeError(`utcToWall: ${utc} is outside years 0001-9999 in ${tz}`);
  return msToString(wallMs);
}


/**
 * The integer fields of a `'YYYY-MM-DD HH:MM:SS'` string, for the records' `*_details` objects.
 * @throws RangeError for a malformed or impossible date-time.
 */
export function dateDetails(s: string): DateDetails {
  // The checks of `requireDateTimeMs` without the instant it computes (a list's page asks this four times an item).
  const m = DATE_TIME_RE.exec(s);
  if (m !== null) {
    const year = Number(m[1]);
    const month = Number(m[2]);
    const day = Number(m[3]);
    const hour = Number(m[4]);
    const minutes = Number(m[5]);
    const seconds = Number(m[6]);
    if (year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month) && hour <= 23 && minutes <= 59 && seconds <= 59) {
      return { year, month, day, hour, minutes, seconds };
    }
  }
  throw new RangeError(`dateDetails: expected 'YYYY-MM-DD HH:MM:SS' (years 0001-9999), got ${JSON.stringify(s)}`);
}

/**
 * Parses a date sent in a write body (CONTRACT §5) to UTC. Accepted: `YYYY-MM-DD HH:MM[:SS]` and
 * `YYYY-MM-DDTHH:MM[:SS]` (wall time in tz), `YYYY-MM-DD` (midnight wall time in tz), and either of
 * those with `Z` or a `±HH:MM`/`±HHMM`/`±HH` offset (an instant; tz then plays no part). Fractional
 * seconds are truncated. Null when malformed, impossible (2025-02-30, 25:00) or outside 0001–9999,
 * in UTC or as wall time in tz (the record keeps both: `0001-01-01T00:00:00Z` has no wall time in
 * New York).
 * @throws RangeError for an unknown zone (validate tz first: a bad zone is not a bad date).
 */
export function parseBodyDate(value: string, tz: string): string | null {
  const offsetAt = offsetFunction(tz);
  const utcMs = parseInputMs(value, offsetAt);
  if (utcMs === null || !inRange(utcMsToWallMs(utcMs, offsetAt))) return null;
  return msToString(utcMs);
}

/**
 * Parses a query filter date (CONTRACT §4) to its UTC instant and the site-local day of that
 * instant. Accepted: everything {@link parseBodyDate} accepts (without an offset: site wall time),
 * a UNIX timestamp in seconds (`1735689600`, `-86400`), and the words `now`, `today`, `tomorrow`
 * and `yesterday` (case-insensitive; the last three mean 00:00:00 of that site-local day). The
 * clock is passed in as nowUtc so that callers and tests control it. Null when invalid.
 * @throws RangeError for an unknown zone or an invalid nowUtc.
 */
export function parseFilterDate(value: string, siteTz: string, nowUtc: Date): FilterDate | null {
  const offsetAt = offsetFunction(siteTz);
  const nowMs = nowUtc.getTime();
  if (!inRange(nowMs)) throw new RangeError('parseFilterDate: nowUtc is not a date within years 0001-9999');
  let utcMs: number | null;
  const word = value.toLowerCase();
  if (word === 'now') {
    utcMs = floorSecond(nowMs);
  } else if (word === 'today' || word === 'tomorrow' || word === 'yesterday') {
    const todayMs = floorToDay(utcMsToWallMs(nowMs, offsetAt));
    const shift = word === 'today' ? 0 : word === 'tomorrow' ? DAY : -DAY;
    utcMs = startOfDayMs(todayMs + shift, offsetAt);
  } else if (/^-?\d{1,15}$/.test(value)) {
    utcMs = Number(value) * SECOND;
  } else {
    utcMs = parseInputMs(value, offsetAt);
  }
  if (utcMs === null || !inRange(utcMs)) return null;
  const localMs = utcMsToWallMs(utcMs, offsetAt);
  if (!inRange(localMs)) return null;
  return { utc: msToString(utcMs), localDay: msToString(localMs).slice(0, 10) };
}

/** Floors milliseconds to the start of their (UTC-field) day. */
function floorToDay(ms: number): number {
  return Math.floor(ms / DAY) * DAY;
}

/**
 * The UTC instant at which a site-local day begins: 00:00:00 wall time, or the first moment after
 * a DST gap at midnight. Used to widen `start_date` to whole days. Clamped to 0001–9999.
 * @throws RangeError for a malformed day or an unknown zone.
 */
export function startOfDayUtc(localDay: string, siteTz: string): string {
  const dayMs = requireDayMs(localDay, 'startOfDayUtc');
  return msToString(clampToRange(startOfDayMs(dayMs, offsetFunction(siteTz))));
}

/**
 * The last whole second of a site-local day in UTC: 23:59:59 wall time, computed as one second
 * before the next day begins so that a repeated hour at the end of the day is inside it. Used to
 * widen the other date filters to whole days. Clamped to 0001–9999.
 * @throws RangeError for a malformed day or an unknown zone.
 */
export function endOfDayUtc(localDay: string, siteTz: string): string {
  const dayMs = requireDayMs(localDay, 'endOfDayUtc');
  return msToString(clampToRange(startOfDayMs(dayMs + DAY, offsetFunction(siteTz)) - SECOND));
}

/**
 * The same month and day n years later (n may be negative); 29 February becomes 28 February in
 * a common year. For the default `end_date`, "the same day two years ahead".
 * @throws RangeError for a malformed day, a non-integer n, or a result outside 0001–9999.
 */
export function addYears(localDay: string, n: number): string {
  requireDayMs(localDay, 'addYears');
  if (!Number.isInteger(n)) throw new RangeError(`addYears: n must be an integer, got ${n}`);
  const [year, month, day] = localDay.split('-').map(Number) as [number, number, number];
  const target = year + n;
  const ms = fieldsToMs(target, month, Math.min(day, daysInMonth(target, month)));
  if (ms === null) throw new RangeError(`addYears: ${localDay} + ${n} years is outside years 0001-9999`);
  return msToString(ms).slice(0, 10);
}


/**
 * The calendar day n days later (n may be negative).
 * @throws RangeError for a malformed day, a non-integer n, or a result outside 0001–9999.
 */
export function addDays(localDay: string, n: number): string {
  const dayMs = requireDayMs(localDay, 'addDays');
  if (!Number.isInteger(n)) throw new RangeError(`addDays: n must be an integer, got ${n}`);
  const ms = dayMs + n * DAY;
  if (!inRange(ms)) throw new RangeError(`addDays: ${localDay} + ${n} days is outside years 0001-9999`);
  return msToString(ms).slice(0, 10);
}

/**
 * A `Date` as a UTC `'YYYY-MM-DD HH:MM:SS'` string, milliseconds truncated.
 * @throws RangeError for an invalid Date or one outside 0001–9999.
 */
export function formatUtc(d: Date): string {
  const ms = d.getTime();
  if (!inRange(ms)) throw new RangeError('formatUtc: date is invalid or outside years 0001-9999');
  return msToString(floorSecond(ms));
}



/**
 * A UTC instant as ISO 8601 wall time in tz with its offset, `2025-01-05T14:23:36-05:00`, as
 * schema.org's `startDate` wants. Sub-minute historical offsets are cut to whole minutes and the
 * wall time adjusted to match, so the instant stays exact.
 * @throws RangeError for a malformed date-time or an unknown zone.
 */
export function isoWithOffset(utc: string, tz: string): string {
  const utcMs = requireDateTimeMs(utc, 'isoWithOffset');
  const raw = offsetFunction(tz)(utcMs);
  const offsetMs = Math.trunc(raw / MINUTE) * MINUTE;
  return `${msToString(utcMs + offsetMs).replace(' ', 'T')}${isoOffset(offsetMs)}`;
}
