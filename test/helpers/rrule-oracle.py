"""A second expansion of recurring series, for test/recurrence-oracle.test.ts: the rule's periods and BY
parts by dateutil.rrule on wall times, the time zones by zoneinfo (the system's tz database, not ICU),
corrected for RFC 5545's DST rules (a local start that does not exist is dropped and not counted; an
ambiguous one is fold=0, its first instant). Reads a JSON list of series on stdin, writes a JSON list of
answers: a list of [id, start, end, start_utc, end_utc] in order, or {"refused": reason}."""

import json
import re
import sys
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from dateutil.rrule import rrulestr

MAX = 3500
LAST = datetime(9999, 12, 31, 23, 59, 59)
FMT = '%Y-%m-%d %H:%M:%S'
WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU']


def zone(name):
    m = re.fullmatch(r'UTC([+-])(\d{1,2})(?::(\d{2}))?', name)
    if m is None:
        return ZoneInfo(name)
    minutes = int(m[2]) * 60 + int(m[3] or 0)
    return timezone(timedelta(minutes=-minutes if m[1] == '-' else minutes))


def instant(wall, tz):
    """The first instant of a wall time (a time in a gap: as if the offset before it still held)."""
    return wall.replace(tzinfo=tz, fold=0).astimezone(timezone.utc).replace(tzinfo=None)


def exists(wall, tz):
    utc = instant(wall, tz)
    return utc.replace(tzinfo=timezone.utc).astimezone(tz).replace(tzinfo=None) == wall


def wall_of(utc, tz):
    return utc.replace(tzinfo=timezone.utc).astimezone(tz).replace(tzinfo=None)


def parse(text):
    return datetime.strptime(text, FMT) if ' ' in text else datetime.strptime(text, '%Y-%m-%d')


def expand(case):
    tz = zone(case['timezone'])
    all_day = case['allDay']
    start = parse(case['start'])
    start_utc = parse(case['startUtc'])
    wall_duration = parse(case['end']) - start
    exact_duration = parse(case['endUtc']) - start_utc
    horizon = parse(case['horizonUtc'])
    exdates = [parse(d) for d in case['exdates']]
    starts = {start: start_utc}
    rule = case['rule']
    if rule is not None:
        parts = dict(p.split('=', 1) for p in rule.upper().split(';'))
        count = int(parts.pop('COUNT')) if 'COUNT' in parts else None
        until = parts.pop('UNTIL', None)

        def within(wall, utc):
            if until is None:
                return True
            if len(until) == 8:
                return wall.date() <= date(int(until[:4]), int(until[4:6]), int(until[6:8]))
            bound = datetime.strptime(until[:15], '%Y%m%dT%H%M%S')
            return utc <= bound if until.endswith('Z') else wall <= bound

        if not within(start, start_utc):
            return {'refused': 'untilBeforeStart'}
        if until is not None:
            last = datetime.strptime(until[:8], '%Y%m%d') + timedelta(days=3)
        elif count is None:
            last = wall_of(horizon, tz) + timedelta(days=2)
        else:
            last = LAST
        enough = MAX + len(exdates) + 1
        counted = 1
        if count != 1:
            # dateutil starts a weekly rule's first period at DTSTART, not at the start of its week, so
            # BYSETPOS would count in a part of that week only: start it at the week's first day instead
            # (the same weeks; BYDAY names the days, so DTSTART's own weekday plays no part).
            first = start
            if parts['FREQ'] == 'WEEKLY' and 'BYDAY' in parts:
                week_start = WEEKDAYS.index(parts.get('WKST', 'MO'))
                first = start - timedelta(days=(start.weekday() - week_start) % 7)
            for wall in rrulestr('RRULE:' + ';'.join(f'{k}={v}' for k, v in parts.items()), dtstart=first):
                if wall > last:
                    break
                if wall <= start:
                    continue
                if not all_day and not exists(wall, tz):
                    continue
                utc = instant(wall, tz)
                if not within(wall, utc):
                    break
                if count is None and until is None and utc >= horizon:
                    break
                starts[wall] = utc
                counted += 1
                if (count is not None and counted >= count) or len(starts) >= enough:
                    break
    for text in case['rdates']:
        wall = parse(text)
        if wall in starts:
            continue
        # An rdate is an occurrence like the rule's: skipped in a gap; none may come before the event's start.
        if not all_day and not exists(wall, tz):
            continue
        utc = instant(wall, tz)
        if utc < start_utc:
            return {'refused': 'rdateBeforeStart'}
        starts[wall] = utc
    for wall in exdates:
        starts.pop(wall, None)
    if len(starts) > MAX:
        return {'refused': 'tooManyOccurrences'}
    if not starts:
        return {'refused': 'noOccurrences'}
    out = []
    for wall, utc in starts.items():
        if all_day:
            end = wall + wall_duration
            end_utc = instant(end, tz)
            ident = wall.strftime('%Y%m%d')
        else:
            end_utc = utc + exact_duration
            end = wall_of(end_utc, tz)
            ident = utc.strftime('%Y%m%dT%H%M%SZ')
        out.append([ident, wall.strftime(FMT), end.strftime(FMT), utc.strftime(FMT), end_utc.strftime(FMT)])
    out.sort(key=lambda o: (o[3], o[0]))
    return out


json.dump([expand(case) for case in json.load(sys.stdin)], sys.stdout)
