// The standard 5-field cron syntax (minute hour day-of-month month day-of-week), in UTC: each
// field is `*`, a number, a range `a-b`, any of those stepped `/n`, or a comma list of them.
// Day-of-week runs 0-6 from Sunday (7 is Sunday too). As in cron, when both day fields are
// restricted a day matches either. What the CronJob controller needs of robfig/cron, no more:
// no names (JAN, MON), no `@hourly`, no seconds, no time zones.

export interface Schedule {
  /** The first time strictly after `after` that the schedule fires, at a whole minute. */
  next(after: Date): Date;
}

interface Field {
  min: number;
  max: number;
}
const FIELDS: Field[] = [
  { min: 0, max: 59 }, { min: 0, max: 23 }, { min: 1, max: 31 }, { min: 1, max: 12 }, { min: 0, max: 7 },
];
const MINUTE = 60_000;
/** Past this, a schedule never fires (e.g. "0 0 30 2 *"): four years holds every Feb 29. */
const HORIZON = 4 * 366 * 24 * 60 * MINUTE;

export function parseSchedule(text: string): Schedule {
  const parts = text.trim().split(/\s+/);
  if (parts.length !== 5) throw new Error(`schedule "${text}": expected 5 fields, found ${parts.length}`);
  const [minutes, hours, days, months, weekdays] = parts.map((part, i) => valuesOf(part, FIELDS[i]!, text));
  if (weekdays!.has(7)) weekdays!.add(0);
  const anyDay = parts[2] === "*", anyWeekday = parts[4] === "*";
  const dayMatches = (t: Date): boolean => {
    const byDay = days!.has(t.getUTCDate()), byWeekday = weekdays!.has(t.getUTCDay());
    if (anyDay || anyWeekday) return (anyDay || byDay) && (anyWeekday || byWeekday);
    return byDay || byWeekday;
  };
  return {
    next(after) {
      const t = new Date(Math.floor(after.getTime() / MINUTE) * MINUTE + MINUTE);
      while (t.getTime() - after.getTime() < HORIZON) {
        // Skip the largest unit that does not match, to its start; a minute only when all else does.
        if (!months!.has(t.getUTCMonth() + 1)) {
          t.setUTCMonth(t.getUTCMonth() + 1, 1);
          t.setUTCHours(0, 0);
        } else if (!dayMatches(t)) {
          t.setUTCDate(t.getUTCDate() + 1);
          t.setUTCHours(0, 0);
        } else if (!hours!.has(t.getUTCHours())) t.setUTCHours(t.getUTCHours() + 1, 0);
        else if (!minutes!.has(t.getUTCMinutes())) t.setUTCMinutes(t.getUTCMinutes() + 1);
        else return t;
      }
      throw new Error(`schedule "${text}" never fires`);
    },
  };
}

// The values one field allows: "*", "5", "1-5", "*/15", "10-50/10", "5/15" (5 to the end), and comma lists.
function valuesOf(part: string, field: Field, text: string): Set<number> {
  const values = new Set<number>();
  for (const item of part.split(",")) {
    const match = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(item);
    if (!match) throw new Error(`schedule "${text}": cannot read "${item}"`);
    const from = match[1] === "*" ? field.min : Number(match[2]);
    const to = match[1] === "*" ? field.max : match[3] !== undefined ? Number(match[3]) : match[4] ? field.max : from;
    const step = match[4] !== undefined ? Number(match[4]) : 1;
    if (from < field.min || to > field.max || from > to || step < 1) {
      throw new Error(`schedule "${text}": "${item}" is outside ${field.min}-${field.max}`);
    }
    for (let v = from; v <= to; v += step) values.add(v);
  }
  return values;
}
