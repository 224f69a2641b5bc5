"""A second reader of recurring series in iCalendar feeds, for test/ical-series.test.ts: Python's `icalendar`
(Debian's python3-icalendar) parses the feed; each series' VEVENT (DTSTART;TZID, RRULE, RDATE, EXDATE) is
expanded with dateutil.rrule on wall times and zoneinfo (the system's tz database), as RFC 5545 reads it
(DTSTART is the first occurrence and counts; a local start in a DST gap is skipped and not counted; an
ambiguous one is its first instant; UNTIL an instant, or a date for all-day series); the VEVENTs with a
RECURRENCE-ID replace the occurrence they name. Arguments: the feed's file and the UTC horizon (occurrences
starting before it). Prints JSON: {uid: [[occurrence id, start, end, summary], ...]}: timed occurrences as UTC
instants `YYYY-MM-DD HH:MM:SS`, the id `YYYYMMDDTHHMMSSZ`; all-day ones as their first and last local day, the
id `YYYYMMDD`."""

import json
import re
import sys
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from dateutil.rrule import rrulestr
from icalendar import Calendar

FMT = '%Y-%m-%d %H:%M:%S'


def zone(tzid):
    m = re.fullmatch(r'UTC([+-])(\d{2})(\d{2})', tzid)
    if m is None:
        return ZoneInfo(tzid)
    minutes = int(m[2]) * 60 + int(m[3])
    return timezone(timedelta(minutes=-minutes if m[1] == '-' else minutes))


def naive(value):
    """A DATE-TIME with a TZID as its wall time (the time as written); a DATE as its midnight."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=None)
    return datetime(value.year, value.month, value.day)


def instant(wall, tz):
    return wall.replace(tzinfo=tz, fold=0).astimezone(timezone.utc).replace(tzinfo=None)


def exists(wall, tz):
    return instant(wall, tz).replace(tzinfo=timezone.utc).astimezone(tz).replace(tzinfo=None) == wall


def values(component, name):
    """Every value of a property that may appear several times, each possibly a list (RDATE, EXDATE)."""
    found = component.get(name)
    if found is None:
        return []
    props = found if isinstance(found, list) else [found]
    return [naive(d.dt) for p in props for d in p.dts]


def when(component, name, tz, all_day):
    prop = component.get(name)
    if all_day:
        return ('day', prop.dt)
    if prop.params.get('TZID') is not None:
        return ('utc', instant(naive(prop.dt), tz))
    return ('utc', prop.dt.astimezone(timezone.utc).replace(tzinfo=None))


def main():
    with open(sys.argv[1], 'rb') as f:
        cal = Calendar.from_ical(f.read())
    horizon = datetime.strptime(sys.argv[2], FMT)
    masters, changed = {}, {}
    for e in cal.walk('VEVENT'):
        uid = str(e.get('UID'))
        if e.get('RECURRENCE-ID') is not None:
            changed.setdefault(uid, []).append(e)
        else:
            masters[uid] = e
    out = {}
    for uid, e in masters.items():
        start = e.get('DTSTART')
        all_day = not isinstance(start.dt, datetime)
        tzid = start.params.get('TZID')
        tz = timezone.utc if all_day or tzid is None else zone(tzid)
        first = naive(start.dt) if tzid is not None or all_day else start.dt.astimezone(timezone.utc).replace(tzinfo=None)
        end_wall = naive(e.get('DTEND').dt) if tzid is not None or all_day else e.get('DTEND').dt.astimezone(timezone.utc).replace(tzinfo=None)
        starts = [first]
        rule = e.get('RRULE')
        if rule is not None:
            parts = dict(p.split('=', 1) for p in rule.to_ical().decode().split(';'))
            count = int(parts.pop('COUNT')) if 'COUNT' in parts else None
            until = parts.pop('UNTIL', None)
            if until is not None:
                until = date(int(until[:4]), int(until[4:6]), int(until[6:8])) if len(until) == 8 else datetime.strptime(until, '%Y%m%dT%H%M%SZ')
            counted = 1
            for wall in rrulestr(';'.join(f'{k}={v}' for k, v in parts.items()), dtstart=first):
                if count is not None and counted >= count:
                    break
                if wall <= first:
                    continue
                if not all_day and not exists(wall, tz):
                    continue
                if until is not None and (wall.date() > until if all_day else instant(wall, tz) > until):
                    break
                if instant(wall, tz) >= horizon:
                    break
                starts.append(wall)
                counted += 1
        starts += [d for d in values(e, 'RDATE') if d not in starts]
        excluded = set(values(e, 'EXDATE'))
        starts = sorted((s for s in starts if s not in excluded), key=lambda s: instant(s, tz))
        overrides = {naive(c.get('RECURRENCE-ID').dt): c for c in changed.get(uid, [])}
        rows = []
        for s in starts:
            if instant(s, tz) >= horizon:
                continue
            c = overrides.get(s)
            summary = str((c if c is not None else e).get('SUMMARY'))
            if all_day:
                key = s.strftime('%Y%m%d')
                if c is not None:
                    first_day, after = c.get('DTSTART').dt, c.get('DTEND').dt
                else:
                    first_day, after = s.date(), s.date() + (end_wall - first)
                rows.append([key, first_day.isoformat(), (after - timedelta(days=1)).isoformat(), summary])
            else:
                key = instant(s, tz).strftime('%Y%m%dT%H%M%SZ')
                if c is not None:
                    b, a = when(c, 'DTSTART', tz, False)[1], when(c, 'DTEND', tz, False)[1]
                else:
                    b = instant(s, tz)
                    a = b + (instant(end_wall, tz) - instant(first, tz))
                rows.append([key, b.strftime(FMT), a.strftime(FMT), summary])
        out[uid] = rows
    print(json.dumps(out))


main()
