import t from 'tap';
import {
  addDays,
  addYears,
  dateDetails,
  requireDateTimeMs,
  endOfDayUtc,
  formatUtc,
  isoWithOffset,
  parseBodyDate,
  parseFilterDate,
  startOfDayUtc,
  utcToWall,
  wallToUtc,
} from '../src/lib/dates.js';
import { isValidTimezone } from '../src/lib/time-zones.js';
import { tzAbbreviation } from '../src/lib/tz-abbreviation.js';

const NY = 'America/New_York';
const BERLIN = 'Europe/Berlin';
const LORD_HOWE = 'Australia/Lord_Howe';
const KOLKATA = 'Asia/Kolkata';
const SANTIAGO = 'America/Santiago';

t.test('isValidTimezone', async (t) => {
  const valid = [
    NY, 'UTC', BERLIN, 'Europe/Vienna', 'Europe/Zurich', LORD_HOWE, KOLKATA, 'Asia/Calcutta', 'Etc/GMT+5',
    'EST5EDT', 'UTC+2', 'UTC-5', 'UTC+5:30', 'UTC+5.5', 'UTC+0', 'UTC-0', 'UTC+14', 'UTC-12', 'UTC+5.75',
    'UTC-9.5', 'UTC+05:45', 'UTC+12.75',
  ];
  const invalid = [
    '', 'Mars/Olympus', 'America/New York', ' America/New_York', 'America/New_York ', '+05:30', '05:30',
    'GMT+2', 'UTC+', 'UTC+2:3', 'UTC+5:60', 'UTC+15', 'UTC-14:30', 'UTC+5.33', 'UTC 2', 'utc+2', 'UTC+123',
    'UTC+5.', 'Z',
  ];
  t.same(valid.filter((tz) => !isValidTimezone(tz)), [], 'all valid zones accepted');
  t.same(invalid.filter((tz) => isValidTimezone(tz)), [], 'all invalid zones rejected');
});

t.test('wallToUtc: plain conversions', async (t) => {
  t.equal(wallToUtc('2025-01-15 12:00:00', NY), '2025-01-15 17:00:00', 'EST is UTC-5');
  t.equal(wallToUtc('2025-07-15 12:00:00', NY), '2025-07-15 16:00:00', 'EDT is UTC-4');
  t.equal(wallToUtc('2025-01-15 12:00:00', BERLIN), '2025-01-15 11:00:00', 'CET is UTC+1');
  t.equal(wallToUtc('2025-07-15 12:00:00', BERLIN), '2025-07-15 10:00:00', 'CEST is UTC+2');
  t.equal(wallToUtc('2025-06-01 10:00:00', KOLKATA), '2025-06-01 04:30:00', 'IST is UTC+5:30');
  t.equal(wallToUtc('2025-06-01 10:00:00', 'Asia/Calcutta'), '2025-06-01 04:30:00', 'alias works');
  t.equal(wallToUtc('2025-07-01 12:00:00', LORD_HOWE), '2025-07-01 01:30:00', 'LHST is UTC+10:30');
  t.equal(wallToUtc('2025-01-01 12:00:00', LORD_HOWE), '2025-01-01 01:00:00', 'LHDT is UTC+11');
  t.equal(wallToUtc('2025-06-01 10:00:00', 'UTC'), '2025-06-01 10:00:00');
  t.equal(wallToUtc('2025-01-01 03:00:00', 'Asia/Kathmandu'), '2024-12-31 21:15:00', 'UTC+5:45 crosses a day');
  t.equal(wallToUtc('2025-01-01 00:00:00', 'Pacific/Kiritimati'), '2024-12-31 10:00:00', 'UTC+14');
  t.equal(wallToUtc('2025-12-31 23:00:00', 'Pacific/Pago_Pago'), '2026-01-01 10:00:00', 'UTC-11 crosses a year');
});

t.test('wallToUtc: manual offsets', async (t) => {
  t.equal(wallToUtc('2025-06-01 10:00:00', 'UTC+5:30'), '2025-06-01 04:30:00');
  t.equal(wallToUtc('2025-06-01 10:00:00', 'UTC+5.5'), '2025-06-01 04:30:00');
  t.equal(wallToUtc('2025-06-01 10:00:00', 'UTC+05:30'), '2025-06-01 04:30:00');
  t.equal(wallToUtc('2025-06-01 02:00:00', 'UTC+5:30'), '2025-05-31 20:30:00', 'crosses back a day');
  t.equal(wallToUtc('2025-06-01 10:00:00', 'UTC+2'), '2025-06-01 08:00:00');
  t.equal(wallToUtc('2025-06-01 22:00:00', 'UTC-5'), '2025-06-02 03:00:00', 'crosses forward a day');
  t.equal(wallToUtc('2025-06-01 10:00:00', 'UTC-9.5'), '2025-06-01 19:30:00');
  t.equal(wallToUtc('2025-06-01 10:00:00', 'UTC+5.75'), '2025-06-01 04:15:00');
  t.equal(wallToUtc('2025-06-01 10:00:00', 'UTC+0'), '2025-06-01 10:00:00');
  t.equal(wallToUtc('2025-03-09 02:30:00', 'UTC-5'), '2025-03-09 07:30:00', 'no DST in a manual offset');
});

t.test('wallToUtc: New York spring forward (gap) 2025-03-09', async (t) => {
  t.equal(wallToUtc('2025-03-09 01:59:59', NY), '2025-03-09 06:59:59', 'last EST second');
  t.equal(wallToUtc('2025-03-09 02:00:00', NY), '2025-03-09 07:00:00', 'gap start → 03:00 EDT');
  t.equal(wallToUtc('2025-03-09 02:30:00', NY), '2025-03-09 07:30:00', 'gap middle → 03:30 EDT');
  t.equal(wallToUtc('2025-03-09 02:59:59', NY), '2025-03-09 07:59:59', 'gap end → 03:59:59 EDT');
  t.equal(wallToUtc('2025-03-09 03:00:00', NY), '2025-03-09 07:00:00', 'first EDT second');
  t.equal(utcToWall(wallToUtc('2025-03-09 02:30:00', NY), NY), '2025-03-09 03:30:00', 'shifted forward by the gap');
});

t.test('wallToUtc: New York fall back (overlap) 2025-11-02', async (t) => {
  t.equal(wallToUtc('2025-11-02 00:59:59', NY), '2025-11-02 04:59:59', 'before the overlap');
  t.equal(wallToUtc('2025-11-02 01:00:00', NY), '2025-11-02 05:00:00', 'first 01:00 (EDT)');
  t.equal(wallToUtc('2025-11-02 01:30:00', NY), '2025-11-02 05:30:00', 'first 01:30 (EDT)');
  t.equal(wallToUtc('2025-11-02 01:59:59', NY), '2025-11-02 05:59:59', 'first 01:59:59 (EDT)');
  t.equal(wallToUtc('2025-11-02 02:00:00', NY), '2025-11-02 07:00:00', 'after the overlap (EST)');
  t.equal(utcToWall('2025-11-02 05:30:00', NY), '2025-11-02 01:30:00', 'first occurrence back');
  t.equal(utcToWall('2025-11-02 06:30:00', NY), '2025-11-02 01:30:00', 'second occurrence back');
});

t.test('wallToUtc: Europe/Berlin DST changes 2025', async (t) => {
  t.equal(wallToUtc('2025-03-30 01:59:59', BERLIN), '2025-03-30 00:59:59');
  t.equal(wallToUtc('2025-03-30 02:30:00', BERLIN), '2025-03-30 01:30:00', 'gap → 03:30 CEST');
  t.equal(wallToUtc('2025-03-30 03:00:00', BERLIN), '2025-03-30 01:00:00');
  t.equal(wallToUtc('2025-10-26 02:30:00', BERLIN), '2025-10-26 00:30:00', 'overlap → first (CEST)');
  t.equal(wallToUtc('2025-10-26 03:00:00', BERLIN), '2025-10-26 02:00:00');
  t.equal(utcToWall('2025-10-26 01:30:00', BERLIN), '2025-10-26 02:30:00', 'second occurrence back');
});

t.test('wallToUtc: Australia/Lord_Howe 30-minute DST 2025', async (t) => {
  t.equal(wallToUtc('2025-04-06 01:29:59', LORD_HOWE), '2025-04-05 14:29:59', 'before the overlap');
  t.equal(wallToUtc('2025-04-06 01:30:00', LORD_HOWE), '2025-04-05 14:30:00', 'overlap start, first');
  t.equal(wallToUtc('2025-04-06 01:45:00', LORD_HOWE), '2025-04-05 14:45:00', 'overlap, first (+11)');
  t.equal(wallToUtc('2025-04-06 02:00:00', LORD_HOWE), '2025-04-05 15:30:00', 'after the overlap (+10:30)');
  t.equal(utcToWall('2025-04-05 15:15:00', LORD_HOWE), '2025-04-06 01:45:00', 'second occurrence back');
  t.equal(wallToUtc('2025-10-05 01:59:59', LORD_HOWE), '2025-10-04 15:29:59', 'before the gap');
  t.equal(wallToUtc('2025-10-05 02:00:00', LORD_HOWE), '2025-10-04 15:30:00', 'gap start → 02:30');
  t.equal(wallToUtc('2025-10-05 02:15:00', LORD_HOWE), '2025-10-04 15:45:00', 'gap → 02:45, 30 min on');
  t.equal(wallToUtc('2025-10-05 02:30:00', LORD_HOWE), '2025-10-04 15:30:00', 'after the gap');
  t.equal(utcToWall('2025-10-04 15:45:00', LORD_HOWE), '2025-10-05 02:45:00');
});

t.test('wallToUtc: leap days, year range, history, invalid input', async (t) => {
  t.equal(wallToUtc('2024-02-29 23:00:00', NY), '2024-03-01 04:00:00', 'leap day into March');
  t.equal(wallToUtc('2000-02-29 12:00:00', 'UTC'), '2000-02-29 12:00:00', '2000 is a leap year');
  t.throws(() => wallToUtc('2025-02-29 12:00:00', NY), RangeError, '2025 has no Feb 29');
  t.throws(() => wallToUtc('1900-02-29 12:00:00', 'UTC'), RangeError, '1900 has no Feb 29');
  t.equal(wallToUtc('0001-01-01 05:00:00', 'UTC+2'), '0001-01-01 03:00:00', 'year 0001');
  t.equal(wallToUtc('9999-12-31 18:00:00', NY), '9999-12-31 23:00:00', 'year 9999');
  t.throws(() => wallToUtc('0001-01-01 00:00:00', 'UTC+2'), RangeError, 'result in year 0');
  t.throws(() => wallToUtc('9999-12-31 23:00:00', NY), RangeError, 'result in year 10000');
  t.throws(() => wallToUtc('0000-06-01 00:00:00', 'UTC'), RangeError, 'year 0');
  t.equal(wallToUtc('1800-01-01 00:00:00', NY), '1800-01-01 04:56:02', 'local mean time −4:56:02');
  t.equal(wallToUtc('1950-06-01 12:00:00', BERLIN), '1950-06-01 11:00:00', 'Berlin 1950: no DST');
  for (const bad of ['2025-01-01', '2025-01-01T10:00:00', '2025-1-01 10:00:00', '2025-01-01 24:00:00',
    '2025-01-01 10:60:00', '2025-01-01 10:00:60', '2025-13-01 10:00:00', '2025-00-01 10:00:00', '2025-04-31 10:00:00',
    '2025-01-01 10:00:00 ', '']) {
    t.throws(() => wallToUtc(bad, NY), RangeError, `malformed ${JSON.stringify(bad)}`);
  }
  t.throws(() => wallToUtc('2025-01-01 10:00:00', 'Mars/Olympus'), RangeError, 'unknown zone');
});

t.test('wallToUtc/utcToWall round trip through the 2025 DST changes of several zones', async (t) => {
  const offsetMinutes = (tz: string, ms: number): number =>
    (Date.parse(`${utcToWall(formatUtc(new Date(ms)), tz).replace(' ', 'T')}Z`) - ms) / 60_000;
  for (const tz of [NY, BERLIN, LORD_HOWE, SANTIAGO, 'Europe/London', 'Pacific/Chatham', 'America/St_Johns']) {
    // Every 15 minutes within a day of each change (found by a daily scan), plus every noon of the year.
    const samples: number[] = [];
    let changes = 0;
    for (let day = Date.UTC(2025, 0, 1); day < Date.UTC(2026, 0, 1); day += 86_400_000) {
      samples.push(day + 43_200_000);
      if (offsetMinutes(tz, day) !== offsetMinutes(tz, day + 86_400_000)) {
        changes++;
        for (let ms = day - 86_400_000; ms < day + 2 * 86_400_000; ms += 15 * 60_000) samples.push(ms);
      }
    }
    const mismatches: string[] = [];
    for (const ms of samples) {
      const utc = formatUtc(new Date(ms));
      const wall = utcToWall(utc, tz);
      const back = wallToUtc(wall, tz);
      // Only the second occurrence of a repeated wall time may map elsewhere: to its first one.
      if (back !== utc && !(back < utc && utcToWall(back, tz) === wall)) mismatches.push(`${utc} → ${wall} → ${back}`);
    }
    t.same([changes, mismatches], [2, []], `${tz}: two changes, every sample round-trips`);
  }
});

t.test('utcToWall', async (t) => {
  t.equal(utcToWall('2025-03-09 06:59:59', NY), '2025-03-09 01:59:59');
  t.equal(utcToWall('2025-03-09 07:00:00', NY), '2025-03-09 03:00:00');
  t.equal(utcToWall('2025-11-02 05:59:59', NY), '2025-11-02 01:59:59');
  t.equal(utcToWall('2025-11-02 06:00:00', NY), '2025-11-02 01:00:00');
  t.equal(utcToWall('2025-06-01 04:30:00', KOLKATA), '2025-06-01 10:00:00');
  t.equal(utcToWall('2025-06-01 20:00:00', 'UTC+5:30'), '2025-06-02 01:30:00');
  t.equal(utcToWall('2025-06-01 20:00:00', 'UTC+5.5'), '2025-06-02 01:30:00');
  t.equal(utcToWall('2025-06-01 02:00:00', 'UTC-5'), '2025-05-31 21:00:00');
  t.equal(utcToWall('2024-02-29 23:00:00', BERLIN), '2024-03-01 00:00:00', 'leap day into March');
  t.equal(utcToWall('2024-03-01 03:00:00', NY), '2024-02-29 22:00:00', 'back onto the leap day');
  t.equal(utcToWall('1800-01-01 04:56:02', NY), '1800-01-01 00:00:00', 'local mean time');
  t.throws(() => utcToWall('9999-12-31 23:00:00', BERLIN), RangeError, 'wall time in year 10000');
  t.throws(() => utcToWall('0001-01-01 01:00:00', NY), RangeError, 'wall time in year 0');
  t.throws(() => utcToWall('2025-06-01T02:00:00Z', 'UTC'), RangeError, 'not the record format');
  t.throws(() => utcToWall('2025-06-01 02:00:00', 'Nowhere/Land'), RangeError, 'unknown zone');
});

t.test('tzAbbreviation', async (t) => {
  const cases: [string, string, string][] = [
    [NY, '2025-01-15 12:00:00', 'EST'],
    [NY, '2025-07-15 12:00:00', 'EDT'],
    [NY, '2025-03-09 06:59:59', 'EST'],
    [NY, '2025-03-09 07:00:00', 'EDT'],
    [NY, '2025-11-02 05:59:59', 'EDT'],
    [NY, '2025-11-02 06:00:00', 'EST'],
    [BERLIN, '2025-01-15 12:00:00', 'CET'],
    [BERLIN, '2025-07-15 12:00:00', 'CEST'],
    [BERLIN, '2025-03-30 00:59:59', 'CET'],
    [BERLIN, '2025-03-30 01:00:00', 'CEST'],
    ['Europe/Vienna', '2025-01-15 12:00:00', 'CET'],
    ['Europe/Vienna', '2025-07-15 12:00:00', 'CEST'],
    ['Europe/Zurich', '2025-01-15 12:00:00', 'CET'],
    ['Europe/Zurich', '2025-07-15 12:00:00', 'CEST'],
    ['Europe/Madrid', '2025-07-15 12:00:00', 'CEST'],
    ['Europe/London', '2025-01-15 12:00:00', 'GMT'],
    ['Europe/London', '2025-07-15 12:00:00', 'BST'],
    ['Europe/Dublin', '2025-07-15 12:00:00', 'IST'],
    ['Europe/Lisbon', '2025-01-15 12:00:00', 'WET'],
    ['Europe/Lisbon', '2025-07-15 12:00:00', 'WEST'],
    ['Europe/Athens', '2025-07-15 12:00:00', 'EEST'],
    ['Europe/Moscow', '2025-07-15 12:00:00', 'MSK'],
    ['UTC', '2025-07-15 12:00:00', 'UTC'],
    ['Europe/Istanbul', '2025-07-15 12:00:00', '+03'],
    [KOLKATA, '2025-07-15 12:00:00', 'IST'],
    ['Asia/Calcutta', '2025-07-15 12:00:00', 'IST'],
    ['Asia/Kathmandu', '2025-07-15 12:00:00', '+0545'],
    ['Asia/Tokyo', '2025-07-15 12:00:00', 'JST'],
    ['Asia/Shanghai', '2025-07-15 12:00:00', 'CST'],
    ['Asia/Dubai', '2025-07-15 12:00:00', '+04'],
    ['Asia/Jerusalem', '2025-01-15 12:00:00', 'IST'],
    ['Asia/Jerusalem', '2025-07-15 12:00:00', 'IDT'],
    ['Australia/Sydney', '2025-01-15 12:00:00', 'AEDT'],
    ['Australia/Sydney', '2025-07-15 12:00:00', 'AEST'],
    ['Australia/Adelaide', '2025-07-15 12:00:00', 'ACST'],
    [LORD_HOWE, '2025-01-15 12:00:00', '+11'],
    [LORD_HOWE, '2025-07-15 12:00:00', '+1030'],
    ['Pacific/Auckland', '2025-01-15 12:00:00', 'NZDT'],
    ['Pacific/Chatham', '2025-07-15 12:00:00', '+1245'],
    ['America/Sao_Paulo', '2025-07-15 12:00:00', '-03'],
    ['America/St_Johns', '2025-01-15 12:00:00', 'NST'],
    ['America/St_Johns', '2025-07-15 12:00:00', 'NDT'],
    ['America/Caracas', '2025-07-15 12:00:00', '-04'],
    ['America/Adak', '2025-01-15 12:00:00', 'HST'],
    ['America/Adak', '2025-07-15 12:00:00', 'HDT'],
    ['Pacific/Honolulu', '2025-07-15 12:00:00', 'HST'],
    ['America/Phoenix', '2025-07-15 12:00:00', 'MST'],
    ['Africa/Johannesburg', '2025-07-15 12:00:00', 'SAST'],
    ['Africa/Lagos', '2025-07-15 12:00:00', 'WAT'],
    ['Africa/Abidjan', '2025-07-15 12:00:00', 'GMT'],
    ['Asia/Jakarta', '2025-07-15 12:00:00', 'WIB'],
    ['Asia/Hong_Kong', '2025-07-15 12:00:00', 'HKT'],
    ['Etc/GMT+5', '2025-07-15 12:00:00', '-05'],
    ['Etc/GMT-14', '2025-07-15 12:00:00', '+14'],
    [NY, '1800-01-01 12:00:00', 'LMT'],
    ['UTC+2', '2025-07-15 12:00:00', 'UTC+2'],
    ['UTC+5:30', '2025-07-15 12:00:00', 'UTC+5:30'],
    ['UTC+5.5', '2025-07-15 12:00:00', 'UTC+5.5'],
    ['UTC-5', '2025-07-15 12:00:00', 'UTC-5'],
    ['UTC+0', '2025-07-15 12:00:00', 'UTC+0'],
  ];
  t.same(
    cases.map(([tz, utc]) => [tz, utc, tzAbbreviation(tz, utc)]),
    cases,
  );
  t.throws(() => tzAbbreviation('Mars/Olympus', '2025-07-15 12:00:00'), RangeError);
  t.throws(() => tzAbbreviation(NY, '2025-07-15'), RangeError);
});

t.test('dateDetails', async (t) => {
  t.same(dateDetails('2025-03-09 07:05:09'), { year: 2025, month: 3, day: 9, hour: 7, minutes: 5, seconds: 9 });
  t.same(dateDetails('0001-01-01 00:00:00'), { year: 1, month: 1, day: 1, hour: 0, minutes: 0, seconds: 0 });
  t.same(dateDetails('9999-12-31 23:59:59'), { year: 9999, month: 12, day: 31, hour: 23, minutes: 59, seconds: 59 });
  t.same(dateDetails('2024-02-29 12:30:00'), { year: 2024, month: 2, day: 29, hour: 12, minutes: 30, seconds: 0 });
  t.same(Object.keys(dateDetails('2025-03-09 07:05:09')), ['year', 'month', 'day', 'hour', 'minutes', 'seconds']);
  t.throws(() => dateDetails('2025-02-29 00:00:00'), RangeError);
  t.throws(() => dateDetails('2025-03-09T07:05:09'), RangeError);
  t.throws(() => dateDetails('2025-03-09'), RangeError);
  // It checks what `requireDateTimeMs` checks (without computing the instant): the same strings pass, the same throw.
  for (const s of ['0000-01-01 00:00:00', '2025-13-01 00:00:00', '2025-00-10 00:00:00', '2025-01-00 00:00:00', '2025-04-31 00:00:00',
    '1900-02-29 00:00:00', '2000-02-29 00:00:00', '2025-01-01 24:00:00', '2025-01-01 23:60:00', '2025-01-01 23:59:60', ' 2025-01-01 00:00:00',
    '2025-01-01 00:00:00 ', '2025-1-01 00:00:00', '+025-01-01 00:00:00', '2025-01-01 00:00:0x']) {
    let required: unknown
    try {
      requireDateTimeMs(s, 'dateDetails');
      required = 'valid';
    } catch (error) {
      required = (error as Error).message;
    }
    let details: unknown
    try {
      const d = dateDetails(s);
      details = 'valid';
      t.same(Object.values(d), s.split(/[- :]/).map(Number), `${s}: its fields`);
    } catch (error) {
      details = (error as Error).message;
    }
    t.equal(details, required, `${JSON.stringify(s)}: as requireDateTimeMs`);
  }
});

t.test('parseBodyDate', async (t) => {
  const cases: [string, string, string | null][] = [
    ['2025-01-15 10:00:00', NY, '2025-01-15 15:00:00'],
    ['2025-01-15 10:00', NY, '2025-01-15 15:00:00'],
    ['2025-01-15T10:00:00', NY, '2025-01-15 15:00:00'],
    ['2025-01-15T10:00', NY, '2025-01-15 15:00:00'],
    ['2025-01-15', NY, '2025-01-15 05:00:00'],
    ['2025-07-15 10:00:00', NY, '2025-07-15 14:00:00'],
    ['2025-03-09 02:30:00', NY, '2025-03-09 07:30:00'],
    ['2025-11-02 01:30:00', NY, '2025-11-02 05:30:00'],
    ['2025-01-15 10:00:00.999', NY, '2025-01-15 15:00:00'],
    ['2025-01-15T10:00:59.999999', 'UTC', '2025-01-15 10:00:59'],
    ['2025-01-15T10:00:00Z', NY, '2025-01-15 10:00:00'],
    ['2025-01-15T10:00:00.750Z', NY, '2025-01-15 10:00:00'],
    ['2025-01-15T10:00Z', NY, '2025-01-15 10:00:00'],
    ['2025-01-15T10:00:00+02:00', NY, '2025-01-15 08:00:00'],
    ['2025-01-15T10:00:00-0500', BERLIN, '2025-01-15 15:00:00'],
    ['2025-01-15T10:00:00+05:30', 'UTC', '2025-01-15 04:30:00'],
    ['2025-01-15T02:00:00+05:30', 'UTC', '2025-01-14 20:30:00'],
    ['2025-01-15 10:00:00+02:00', NY, '2025-01-15 08:00:00'],
    ['2025-01-15T10:00:00+02', NY, '2025-01-15 08:00:00'],
    ['2025-01-15T10:00:00.5-00:00', NY, '2025-01-15 10:00:00'],
    ['2025-06-01 10:00', 'UTC+5:30', '2025-06-01 04:30:00'],
    ['2025-06-01 10:00', 'UTC+5.5', '2025-06-01 04:30:00'],
    ['2025-06-01', KOLKATA, '2025-05-31 18:30:00'],
    ['2025-04-06 01:45', LORD_HOWE, '2025-04-05 14:45:00'],
    ['2025-10-05 02:15', LORD_HOWE, '2025-10-04 15:45:00'],
    ['2024-02-29 12:00', BERLIN, '2024-02-29 11:00:00'],
    ['2025-02-29 12:00', BERLIN, null],
    ['2025-02-30', NY, null],
    ['2025-04-31 10:00', NY, null],
    ['2025-01-15 25:00', NY, null],
    ['2025-01-15 24:00', NY, null],
    ['2025-01-15 10:60', NY, null],
    ['2025-01-15 10:00:60', NY, null],
    ['2025-13-01', NY, null],
    ['2025-00-10', NY, null],
    ['2025-01-00', NY, null],
    ['2025-01-15T10:00:00+24:00', NY, null],
    ['2025-01-15T10:00:00+05:60', NY, null],
    ['2025-01-15T10:00:00+5:00', NY, null],
    ['2025-01-15Z', NY, null],
    ['2025-01-15T10', NY, null],
    ['2025-01-15 10:00:00 ', NY, null],
    [' 2025-01-15', NY, null],
    ['2025-1-15', NY, null],
    ['25-01-15', NY, null],
    ['15.01.2025', NY, null],
    ['1736935200', NY, null],
    ['now', NY, null],
    ['', NY, null],
    ['0000-12-31 12:00', 'UTC', null],
    ['0001-01-01 00:00', 'UTC', '0001-01-01 00:00:00'],
    ['0001-01-01 00:00', 'UTC+2', null],
    ['0001-01-01T00:00:00+01:00', 'UTC', null],
    ['9999-12-31 23:59:59', 'UTC', '9999-12-31 23:59:59'],
    ['9999-12-31 23:00', NY, null],
    ['9999-12-31T23:00:00-05:00', 'UTC', null],
    ['10000-01-01', 'UTC', null],
  ];
  t.same(
    cases.map(([value, tz]) => [value, tz, parseBodyDate(value, tz)]),
    cases,
  );
  t.throws(() => parseBodyDate('2025-01-15', 'Mars/Olympus'), RangeError, 'a bad zone is not a bad date');
});

t.test('parseFilterDate: New York site, now = 2025-03-09 04:30:00 UTC (23:30 EST the day before)', async (t) => {
  const now = new Date('2025-03-09T04:30:00.250Z');
  const cases: [string, { utc: string; localDay: string } | null][] = [
    ['now', { utc: '2025-03-09 04:30:00', localDay: '2025-03-08' }],
    ['NOW', { utc: '2025-03-09 04:30:00', localDay: '2025-03-08' }],
    ['today', { utc: '2025-03-08 05:00:00', localDay: '2025-03-08' }],
    ['Today', { utc: '2025-03-08 05:00:00', localDay: '2025-03-08' }],
    ['tomorrow', { utc: '2025-03-09 05:00:00', localDay: '2025-03-09' }],
    ['yesterday', { utc: '2025-03-07 05:00:00', localDay: '2025-03-07' }],
    ['2025-03-09', { utc: '2025-03-09 05:00:00', localDay: '2025-03-09' }],
    ['2025-03-10', { utc: '2025-03-10 04:00:00', localDay: '2025-03-10' }],
    ['2025-03-09 15:00', { utc: '2025-03-09 19:00:00', localDay: '2025-03-09' }],
    ['2025-03-09 15:00:30', { utc: '2025-03-09 19:00:30', localDay: '2025-03-09' }],
    ['2025-03-09T15:00:30', { utc: '2025-03-09 19:00:30', localDay: '2025-03-09' }],
    ['2025-03-09 02:30', { utc: '2025-03-09 07:30:00', localDay: '2025-03-09' }],
    ['2025-11-02 01:30', { utc: '2025-11-02 05:30:00', localDay: '2025-11-02' }],
    ['2025-03-09T02:00:00Z', { utc: '2025-03-09 02:00:00', localDay: '2025-03-08' }],
    ['2025-03-09T10:00:00+02:00', { utc: '2025-03-09 08:00:00', localDay: '2025-03-09' }],
    ['2025-03-09T00:30:00+0100', { utc: '2025-03-08 23:30:00', localDay: '2025-03-08' }],
    ['1735689600', { utc: '2025-01-01 00:00:00', localDay: '2024-12-31' }],
    ['0', { utc: '1970-01-01 00:00:00', localDay: '1969-12-31' }],
    ['-86400', { utc: '1969-12-31 00:00:00', localDay: '1969-12-30' }],
    ['253402300799', { utc: '9999-12-31 23:59:59', localDay: '9999-12-31' }],
    ['253402300800', null],
    ['99999999999999', null],
    ['9999999999999999', null],
    ['1.5', null],
    ['+1735689600', null],
    ['next week', null],
    ['tomorrow 9am', null],
    ['today ', null],
    [' today', null],
    ['', null],
    ['2025-02-29', null],
    ['2025-03-09 25:00', null],
    ['2025-03-09T10:00:00+25:00', null],
    ['2025/03/09', null],
  ];
  t.same(
    cases.map(([value]) => [value, parseFilterDate(value, NY, now)]),
    cases,
  );
});

t.test('parseFilterDate: Europe/Berlin site across its spring-forward midnight', async (t) => {
  const now = new Date('2025-03-29T23:30:00Z'); // 2025-03-30 00:30 CET
  t.same(parseFilterDate('today', BERLIN, now), { utc: '2025-03-29 23:00:00', localDay: '2025-03-30' });
  t.same(parseFilterDate('tomorrow', BERLIN, now), { utc: '2025-03-30 22:00:00', localDay: '2025-03-31' });
  t.same(parseFilterDate('yesterday', BERLIN, now), { utc: '2025-03-28 23:00:00', localDay: '2025-03-29' });
  t.same(parseFilterDate('now', BERLIN, now), { utc: '2025-03-29 23:30:00', localDay: '2025-03-30' });
});

t.test('parseFilterDate: site zones east of UTC, manual offsets and UTC', async (t) => {
  const now = new Date('2025-06-30T20:00:00Z');
  t.same(parseFilterDate('today', KOLKATA, now), { utc: '2025-06-30 18:30:00', localDay: '2025-07-01' });
  t.same(parseFilterDate('today', 'UTC+5:30', now), { utc: '2025-06-30 18:30:00', localDay: '2025-07-01' });
  t.same(parseFilterDate('yesterday', 'UTC+5.5', now), { utc: '2025-06-29 18:30:00', localDay: '2025-06-30' });
  t.same(parseFilterDate('today', 'UTC', now), { utc: '2025-06-30 00:00:00', localDay: '2025-06-30' });
  t.same(parseFilterDate('tomorrow', LORD_HOWE, now), { utc: '2025-07-01 13:30:00', localDay: '2025-07-02' });
  t.same(parseFilterDate('2025-07-01', KOLKATA, now), { utc: '2025-06-30 18:30:00', localDay: '2025-07-01' });
  t.same(parseFilterDate('2024-02-29', 'UTC', now), { utc: '2024-02-29 00:00:00', localDay: '2024-02-29' });
  t.equal(parseFilterDate('0001-01-01', 'Asia/Tokyo', now), null, 'before year 0001 in UTC');
  t.throws(() => parseFilterDate('today', 'Mars/Olympus', now), RangeError);
  t.throws(() => parseFilterDate('today', 'UTC', new Date(Number.NaN)), RangeError);
});

t.test('startOfDayUtc / endOfDayUtc', async (t) => {
  const cases: [string, string, string, string][] = [
    ['2025-06-15', 'UTC', '2025-06-15 00:00:00', '2025-06-15 23:59:59'],
    ['2025-06-15', BERLIN, '2025-06-14 22:00:00', '2025-06-15 21:59:59'],
    ['2025-01-15', BERLIN, '2025-01-14 23:00:00', '2025-01-15 22:59:59'],
    ['2025-03-30', BERLIN, '2025-03-29 23:00:00', '2025-03-30 21:59:59'],
    ['2025-10-26', BERLIN, '2025-10-25 22:00:00', '2025-10-26 22:59:59'],
    ['2025-03-09', NY, '2025-03-09 05:00:00', '2025-03-10 03:59:59'],
    ['2025-11-02', NY, '2025-11-02 04:00:00', '2025-11-03 04:59:59'],
    ['2024-02-29', NY, '2024-02-29 05:00:00', '2024-03-01 04:59:59'],
    ['2025-07-01', KOLKATA, '2025-06-30 18:30:00', '2025-07-01 18:29:59'],
    ['2025-07-01', 'UTC+5:30', '2025-06-30 18:30:00', '2025-07-01 18:29:59'],
    ['2025-07-01', 'UTC-5', '2025-07-01 05:00:00', '2025-07-02 04:59:59'],
    ['2025-10-05', LORD_HOWE, '2025-10-04 13:30:00', '2025-10-05 12:59:59'],
    ['2025-04-06', LORD_HOWE, '2025-04-05 13:00:00', '2025-04-06 13:29:59'],
    // Chile changes clocks at midnight: 2025-09-07 starts at 01:00; 2025-04-05 ends with 23:xx twice.
    ['2025-09-07', SANTIAGO, '2025-09-07 04:00:00', '2025-09-08 02:59:59'],
    ['2025-09-06', SANTIAGO, '2025-09-06 04:00:00', '2025-09-07 03:59:59'],
    ['2025-04-05', SANTIAGO, '2025-04-05 03:00:00', '2025-04-06 03:59:59'],
    ['2025-04-06', SANTIAGO, '2025-04-06 04:00:00', '2025-04-07 03:59:59'],
    ['9999-12-31', NY, '9999-12-31 05:00:00', '9999-12-31 23:59:59'],
    ['0001-01-01', 'UTC+9', '0001-01-01 00:00:00', '0001-01-01 14:59:59'],
    ['0001-01-01', 'Asia/Tokyo', '0001-01-01 00:00:00', '0001-01-01 14:41:00'], // local mean time +9:18:59
  ];
  t.same(
    cases.map(([day, tz]) => [day, tz, startOfDayUtc(day, tz), endOfDayUtc(day, tz)]),
    cases,
  );
  t.equal(wallToUtc('2025-04-05 23:59:59', SANTIAGO), '2025-04-06 02:59:59', 'a plain wall time takes the first 23:59:59');
  t.throws(() => startOfDayUtc('2025-02-29', NY), RangeError);
  t.throws(() => endOfDayUtc('2025-06-15 00:00:00', NY), RangeError);
  t.throws(() => endOfDayUtc('2025-06-15', 'Nowhere/Land'), RangeError);
});

t.test('widening filters to whole site days (CONTRACT §4) in a non-UTC site zone', async (t) => {
  const now = new Date('2025-06-10T12:00:00Z');
  const widen = (value: string, tz: string): [string, string] | null => {
    const parsed = parseFilterDate(value, tz, now);
    return parsed === null ? null : [startOfDayUtc(parsed.localDay, tz), endOfDayUtc(parsed.localDay, tz)];
  };
  t.same(widen('2025-06-15 15:00', BERLIN), ['2025-06-14 22:00:00', '2025-06-15 21:59:59'], 'wall time');
  t.same(widen('2025-06-15', BERLIN), ['2025-06-14 22:00:00', '2025-06-15 21:59:59'], 'day');
  t.same(
    widen('2025-06-15T23:30:00Z', BERLIN),
    ['2025-06-15 22:00:00', '2025-06-16 21:59:59'],
    'an offset is converted first: 23:30Z is 01:30 on the 16th in Berlin',
  );
  t.same(
    widen('2025-06-15T01:00:00+02:00', NY),
    ['2025-06-14 04:00:00', '2025-06-15 03:59:59'],
    '01:00+02:00 is 19:00 on the 14th in New York',
  );
  t.same(widen('today', NY), ['2025-06-10 04:00:00', '2025-06-11 03:59:59'], 'today');
  t.same(widen('1749600000', NY), ['2025-06-10 04:00:00', '2025-06-11 03:59:59'], 'timestamp 2025-06-11 00:00Z');
  t.same(widen('2025-06-15 10:00', 'UTC+5:30'), ['2025-06-14 18:30:00', '2025-06-15 18:29:59'], 'manual offset');
});

t.test('addYears and addDays', async (t) => {
  t.equal(addYears('2025-03-09', 2), '2027-03-09');
  t.equal(addYears('2024-02-29', 2), '2026-02-28', 'Feb 29 → Feb 28');
  t.equal(addYears('2024-02-29', 4), '2028-02-29');
  t.equal(addYears('2024-02-29', -1), '2023-02-28');
  t.equal(addYears('2025-12-31', 0), '2025-12-31');
  t.equal(addYears('9997-06-01', 2), '9999-06-01');
  t.equal(addYears('0003-06-01', -2), '0001-06-01');
  t.throws(() => addYears('9998-06-01', 2), RangeError, 'past 9999');
  t.throws(() => addYears('0002-06-01', -2), RangeError, 'before 0001');
  t.throws(() => addYears('2025-02-29', 2), RangeError, 'not a day');
  t.throws(() => addYears('2025-03-09', 1.5), RangeError, 'not an integer');
  t.equal(addDays('2025-03-09', 1), '2025-03-10');
  t.equal(addDays('2024-02-28', 1), '2024-02-29');
  t.equal(addDays('2025-02-28', 1), '2025-03-01');
  t.equal(addDays('2025-01-01', -1), '2024-12-31');
  t.equal(addDays('2025-01-01', 365), '2026-01-01');
  t.throws(() => addDays('9999-12-31', 1), RangeError);
  t.throws(() => addDays('0001-01-01', -1), RangeError);
});

t.test('formatUtc, isoWithOffset', async (t) => {
  t.equal(formatUtc(new Date('2025-01-02T03:04:05.999Z')), '2025-01-02 03:04:05', 'milliseconds truncated');
  t.equal(formatUtc(new Date(-1)), '1969-12-31 23:59:59', 'truncated towards the past');
  t.equal(formatUtc(new Date('0001-01-01T00:00:00Z')), '0001-01-01 00:00:00');
  t.throws(() => formatUtc(new Date(Number.NaN)), RangeError);
  t.throws(() => formatUtc(new Date('+010000-01-01T00:00:00Z')), RangeError);
  t.equal(isoWithOffset('2025-01-05 19:23:36', NY), '2025-01-05T14:23:36-05:00');
  t.equal(isoWithOffset('2025-07-05 18:23:36', NY), '2025-07-05T14:23:36-04:00');
  t.equal(isoWithOffset('2025-07-05 08:53:36', KOLKATA), '2025-07-05T14:23:36+05:30');
  t.equal(isoWithOffset('2025-07-05 08:53:36', 'UTC+5.5'), '2025-07-05T14:23:36+05:30');
  t.equal(isoWithOffset('2025-07-05 14:23:36', 'UTC'), '2025-07-05T14:23:36+00:00');
  t.equal(isoWithOffset('2025-07-05 04:23:36', 'Asia/Kathmandu'), '2025-07-05T10:08:36+05:45');
  t.equal(isoWithOffset('1800-01-01 04:56:02', NY), '1800-01-01T00:00:02-04:56', 'LMT cut to minutes, same instant');
});
