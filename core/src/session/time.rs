//! ISO-8601 timestamps as pi writes them (`Date.toISOString()`), without a date crate.

use crate::message::now_ms;

const MS_PER_DAY: i64 = 86_400_000;

/// Now, as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn now_iso() -> String {
    format_iso_ms(now_ms())
}

/// Milliseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC), like JavaScript's `toISOString`.
pub fn format_iso_ms(ms: i64) -> String {
    let (year, month, day) = civil_from_days(ms.div_euclid(MS_PER_DAY));
    let rem = ms.rem_euclid(MS_PER_DAY);
    let (hour, minute) = (rem / 3_600_000, rem / 60_000 % 60);
    let (second, milli) = (rem / 1000 % 60, rem % 1000);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{milli:03}Z")
}

/// Milliseconds since the epoch of an ISO-8601 date or date-time; `None` when unparseable.
///
/// Accepts `YYYY-MM-DD`, optionally followed by `THH:MM[:SS[.fff]]` and `Z` or `±HH:MM`.
/// A date-time without an offset is read as UTC (JavaScript would use local time; session
/// files always carry `Z`).
pub fn parse_iso_ms(s: &str) -> Option<i64> {
    let mut p = Cursor {
        s: s.as_bytes(),
        at: 0,
    };
    let year = p.digits(4)?;
    p.expect(b'-')?;
    let month = p.digits(2)?;
    p.expect(b'-')?;
    let day = p.digits(2)?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let mut ms = days_from_civil(year, month, day) * MS_PER_DAY;
    if p.done() {
        return Some(ms);
    }
    if !p.eat(b'T') && !p.eat(b' ') {
        return None;
    }
    let hour = p.digits(2)?;
    p.expect(b':')?;
    let minute = p.digits(2)?;
    let second = if p.eat(b':') { p.digits(2)? } else { 0 };
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    ms += hour * 3_600_000 + minute * 60_000 + second * 1000;
    if p.eat(b'.') {
        // Only milliseconds matter; further digits are read and dropped.
        let start = p.at;
        let mut scale = 100;
        while let Some(d) = p.digit() {
            ms += d * scale;
            scale /= 10;
        }
        if p.at == start {
            return None;
        }
    }
    let sign = if p.eat(b'Z') { None } else { p.sign() };
    if let Some(sign) = sign {
        let off_h = p.digits(2)?;
        p.eat(b':');
        let off_m = p.digits(2)?;
        ms -= sign * (off_h * 3_600_000 + off_m * 60_000);
    }
    p.done().then_some(ms)
}

struct Cursor<'a> {
    s: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn done(&self) -> bool {
        self.at == self.s.len()
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.s.get(self.at) == Some(&b);
        if hit {
            self.at += 1;
        }
        hit
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        self.eat(b).then_some(())
    }

    fn sign(&mut self) -> Option<i64> {
        if self.eat(b'+') {
            Some(1)
        } else if self.eat(b'-') {
            Some(-1)
        } else {
            None
        }
    }

    fn digit(&mut self) -> Option<i64> {
        let b = *self.s.get(self.at)?;
        if b.is_ascii_digit() {
            self.at += 1;
            Some(i64::from(b - b'0'))
        } else {
            None
        }
    }

    fn digits(&mut self, n: usize) -> Option<i64> {
        (0..n).try_fold(0, |acc, _| Some(acc * 10 + self.digit()?))
    }
}

/// Days since 1970-01-01 → (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    // Howard Hinnant's algorithm: shift to an era starting 0000-03-01 so leap days come last.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// (year, month, day) → days since 1970-01-01; the inverse of `civil_from_days`.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}
