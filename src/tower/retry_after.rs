//! The server's pushback in response headers, as the delay it asks for: HTTP's
//! `Retry-After` ([RFC 9110, section 10.2.3]) and gRPC's `grpc-retry-pushback-ms`
//! ([gRFC A6]). Pure functions of the header's bytes (and the wall clock's reading, given):
//! no clock is read here, so the parse is tested and fuzzed as it is.
//!
//! [RFC 9110, section 10.2.3]: https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3
//! [gRFC A6]: https://github.com/grpc/proposal/blob/master/A6-client-retries.md

use core::time::Duration;

/// The delay a `Retry-After` header's value asks for, at `now_unix_secs` seconds after the
/// Unix epoch (the wall clock: `SystemTime::now()`), or `None` if the value is not one of
/// the header's forms.
///
/// * delay-seconds (`120`): that many seconds; a number beyond `u64` saturates.
/// * an HTTP-date, in any of the three forms [RFC 9110] has recipients accept: the
///   IMF-fixdate (`Fri, 31 Dec 1999 23:59:59 GMT`) and the obsolete RFC 850
///   (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`) forms.
///   The delay is the whole seconds from now to then, zero for a date in the past. An
///   RFC 850 year's two digits are the latest year ending in them that is at most 50
///   years after now's, as the RFC says.
///
/// The grammar is the RFC's, strictly: names are case-sensitive, whitespace is allowed
/// only around the value, the day must exist in its month (29 February in leap years
/// only), the second may be 60 (a leap second), and the day name must be the date's: a
/// date that contradicts itself is refused like any other garbage (the response still
/// counts as back-pressure, without a duration). Never panics.
///
/// ```
/// use core::time::Duration;
/// use tailguard::tower::parse_retry_after;
///
/// let now = 946_684_000; // 1999-12-31 23:46:40 UTC
/// assert_eq!(parse_retry_after(b"120", now), Some(Duration::from_secs(120)));
/// assert_eq!(
///     parse_retry_after(b"Fri, 31 Dec 1999 23:59:59 GMT", now),
///     Some(Duration::from_secs(799))
/// );
/// assert_eq!(parse_retry_after(b"Sun Nov  6 08:49:37 1994", now), Some(Duration::ZERO));
/// assert_eq!(parse_retry_after(b"soon", now), None);
/// ```
///
/// [RFC 9110]: https://www.rfc-editor.org/rfc/rfc9110#section-5.6.7
pub fn parse_retry_after(value: &[u8], now_unix_secs: u64) -> Option<Duration> {
    let value = trim_ows(value);
    if let Some(secs) = decimal(value) {
        return Some(Duration::from_secs(secs));
    }
    let date = http_date(value, now_unix_secs)?;
    let now = u128::from(now_unix_secs).saturating_add(EPOCH_SECS);
    let ahead = date.saturating_sub(now);
    Some(Duration::from_secs(
        u64::try_from(ahead).unwrap_or(u64::MAX),
    ))
}

/// The delay a `grpc-retry-pushback-ms` header's value asks for: its milliseconds
/// (saturating), or, for a negative or unparseable value, which gRFC A6 reads as the
/// server asking not to retry at all, `Duration::MAX` (the hedger's `max_pushback`
/// bounds it).
pub(crate) fn grpc_retry_pushback(value: &[u8]) -> Duration {
    match decimal(trim_ows(value)) {
        Some(ms) => Duration::from_millis(ms),
        None => Duration::MAX,
    }
}

/// `value` without the optional whitespace (spaces and tabs) around it.
fn trim_ows(value: &[u8]) -> &[u8] {
    let ows = |b: &u8| *b == b' ' || *b == b'\t';
    let start = value.iter().position(|b| !ows(b)).unwrap_or(value.len());
    let end = value
        .iter()
        .rposition(|b| !ows(b))
        .map_or(start, |i| i.saturating_add(1));
    value.get(start..end).unwrap_or_default()
}

/// `1*DIGIT` as a number, saturating at `u64::MAX`; `None` if empty or not all digits.
fn decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &b| {
        let digit = b.checked_sub(b'0').filter(|d| *d <= 9)?;
        Some(n.saturating_mul(10).saturating_add(u64::from(digit)))
    })
}

const DAY_NAMES: [&[u8]; 7] = [b"Sun", b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat"];
const LONG_DAY_NAMES: [&[u8]; 7] = [
    b"Sunday",
    b"Monday",
    b"Tuesday",
    b"Wednesday",
    b"Thursday",
    b"Friday",
    b"Saturday",
];
const MONTHS: [&[u8]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// What an HTTP-date says, before it is checked.
struct Date {
    weekday: usize,
    year: u64,
    /// 1 to 12.
    month: u64,
    day: u64,
    hour: u64,
    minute: u64,
    second: u64,
}

/// The HTTP-date `value` as seconds since the calendar's origin (see [`days_from_civil`]),
/// or `None` if it is none of the three forms or contradicts itself.
#[allow(clippy::arithmetic_side_effects)] // a four-digit year or one from `year_of`
fn http_date(value: &[u8], now_unix_secs: u64) -> Option<u128> {
    let date = imf_fixdate(value)
        .or_else(|| rfc850_date(value, now_unix_secs))
        .or_else(|| asctime_date(value))?;
    let leap = date.year % 4 == 0 && (date.year % 100 != 0 || date.year % 400 == 0);
    let month_days = match date.month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    let time_ok = date.hour <= 23 && date.minute <= 59 && date.second <= 60;
    if !(1..=month_days).contains(&date.day) || !time_ok {
        return None;
    }
    let days = days_from_civil(date.year, date.month, date.day);
    if weekday(days) != date.weekday {
        return None;
    }
    // Below 2^64 days and a day's seconds: no overflow in 128 bits.
    let time = date.hour * 3_600 + date.minute * 60 + date.second;
    Some(u128::from(days) * 86_400 + u128::from(time))
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`.
fn imf_fixdate(value: &[u8]) -> Option<Date> {
    let mut c = Cursor(value);
    let weekday = c.name(&DAY_NAMES)?;
    c.tag(b", ")?;
    let day = c.digits(2)?;
    c.tag(b" ")?;
    let month = c.month()?;
    c.tag(b" ")?;
    let year = c.digits(4)?;
    c.tag(b" ")?;
    let (hour, minute, second) = c.time_of_day()?;
    c.tag(b" GMT")?;
    c.end()?;
    Some(Date {
        weekday,
        year,
        month,
        day,
        hour,
        minute,
        second,
    })
}

/// `Sunday, 06-Nov-94 08:49:37 GMT`, its century taken from now.
#[allow(clippy::arithmetic_side_effects)] // years below 2^64 / 365
fn rfc850_date(value: &[u8], now_unix_secs: u64) -> Option<Date> {
    let mut c = Cursor(value);
    let weekday = c.name(&LONG_DAY_NAMES)?;
    c.tag(b", ")?;
    let day = c.digits(2)?;
    c.tag(b"-")?;
    let month = c.month()?;
    c.tag(b"-")?;
    let two_digits = c.digits(2)?;
    c.tag(b" ")?;
    let (hour, minute, second) = c.time_of_day()?;
    c.tag(b" GMT")?;
    c.end()?;
    // The latest year ending in those digits at most 50 years after now's (RFC 9110:
    // one "more than 50 years in the future" is the last such year in the past).
    let latest = year_of(now_unix_secs / 86_400) + 50; // now's year is at least 1970
    let year = latest - (latest - two_digits) % 100;
    Some(Date {
        weekday,
        year,
        month,
        day,
        hour,
        minute,
        second,
    })
}

/// `Sun Nov  6 08:49:37 1994` (the day is two digits, or a space and one).
fn asctime_date(value: &[u8]) -> Option<Date> {
    let mut c = Cursor(value);
    let weekday = c.name(&DAY_NAMES)?;
    c.tag(b" ")?;
    let month = c.month()?;
    c.tag(b" ")?;
    let day = match c.tag(b" ") {
        Some(()) => c.digits(1)?,
        None => c.digits(2)?,
    };
    c.tag(b" ")?;
    let (hour, minute, second) = c.time_of_day()?;
    c.tag(b" ")?;
    let year = c.digits(4)?;
    c.end()?;
    Some(Date {
        weekday,
        year,
        month,
        day,
        hour,
        minute,
        second,
    })
}

/// The unparsed rest of a value.
struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    /// Takes `tag` exactly.
    fn tag(&mut self, tag: &[u8]) -> Option<()> {
        self.0 = self.0.strip_prefix(tag)?;
        Some(())
    }

    /// Takes exactly `n` digits, as a number (`n` is at most 4: no overflow).
    fn digits(&mut self, n: usize) -> Option<u64> {
        let (digits, rest) = self.0.split_at_checked(n)?;
        let value = decimal(digits)?;
        self.0 = rest;
        Some(value)
    }

    /// Takes one of `names`, returning its index.
    fn name(&mut self, names: &[&[u8]]) -> Option<usize> {
        let index = names.iter().position(|name| self.0.starts_with(name))?;
        self.tag(names.get(index)?)?;
        Some(index)
    }

    /// Takes a month's name, returning 1 to 12.
    fn month(&mut self) -> Option<u64> {
        let index = self.name(&MONTHS)?;
        u64::try_from(index).ok().map(|i| i.saturating_add(1))
    }

    /// Takes `hh:mm:ss`.
    fn time_of_day(&mut self) -> Option<(u64, u64, u64)> {
        let hour = self.digits(2)?;
        self.tag(b":")?;
        let minute = self.digits(2)?;
        self.tag(b":")?;
        let second = self.digits(2)?;
        Some((hour, minute, second))
    }

    /// Nothing is left.
    fn end(&self) -> Option<()> {
        self.0.is_empty().then_some(())
    }
}

/// Days from the calendar's origin to 1970-01-01, and its seconds.
const EPOCH_DAYS: u64 = days_from_civil(1970, 1, 1);
const EPOCH_SECS: u128 = EPOCH_DAYS as u128 * 86_400;

/// Days from the calendar's origin (400 years before 0000-03-01 of the proleptic
/// Gregorian calendar, so that no date of a four-digit year is before it) to `year-month-day`
/// (`month` 1 to 12, `day` 1 to 31). H. Hinnant's `days_from_civil`
/// (<https://howardhinnant.github.io/date_algorithms.html>), unsigned. No overflow for any
/// year below 2^64 / 366.
#[allow(clippy::arithmetic_side_effects)]
const fn days_from_civil(year: u64, month: u64, day: u64) -> u64 {
    // The year from March, so that the leap day is the year's last; shifted by 400 years
    // (one whole cycle of the calendar) to stay unsigned.
    let y = year + 400 - (month <= 2) as u64;
    let era = y / 400;
    let year_of_era = y % 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era
}

/// The weekday (0 is Sunday) of day `days` of the calendar: 1970-01-01 was a Thursday.
#[allow(clippy::arithmetic_side_effects)] // `days` from `days_from_civil`, below 2^63
fn weekday(days: u64) -> usize {
    // Whole weeks, added, keep the difference to the epoch unsigned.
    let since_thursday = (days + 7 * (EPOCH_DAYS / 7 + 1) - EPOCH_DAYS) % 7;
    (since_thursday as usize + 4) % 7
}

/// The year of day `unix_days` after 1970-01-01 (H. Hinnant's `civil_from_days`).
#[allow(clippy::arithmetic_side_effects)]
fn year_of(unix_days: u64) -> u64 {
    // Below 2^64 / 86,400 days: no overflow.
    let z = unix_days + 719_468; // days since 0000-03-01
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    // January and February belong to the next year.
    era * 400 + year_of_era + u64::from(month_from_march >= 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEC: Duration = Duration::from_secs(1);

    /// 1994-11-06 08:49:37 UTC, the RFC's example date.
    const RFC_EXAMPLE: u64 = 784_111_777;

    #[test]
    fn delay_seconds_are_seconds_and_saturate() {
        assert_eq!(parse_retry_after(b"120", 0), Some(120 * SEC));
        assert_eq!(parse_retry_after(b"0", 5), Some(Duration::ZERO));
        assert_eq!(parse_retry_after(b" \t007 ", 5), Some(7 * SEC));
        assert_eq!(
            parse_retry_after(b"18446744073709551615", 0),
            Some(Duration::from_secs(u64::MAX))
        );
        assert_eq!(
            parse_retry_after(&[b'9'; 400], 0),
            Some(Duration::from_secs(u64::MAX))
        );
        for garbage in [
            &b""[..],
            b" ",
            b"-1",
            b"+5",
            b"1.5",
            b"12 3",
            b"1e3",
            b"0x10",
            "١٢".as_bytes(),
        ] {
            assert_eq!(parse_retry_after(garbage, 0), None, "{garbage:?}");
        }
    }

    #[test]
    fn the_rfcs_three_forms_are_the_same_instant() {
        let forms: [&[u8]; 3] = [
            b"Sun, 06 Nov 1994 08:49:37 GMT",
            b"Sunday, 06-Nov-94 08:49:37 GMT",
            b"Sun Nov  6 08:49:37 1994",
        ];
        let now = RFC_EXAMPLE - 3_600;
        for form in forms {
            assert_eq!(parse_retry_after(form, now), Some(3_600 * SEC), "{form:?}");
            // Past: no delay.
            assert_eq!(parse_retry_after(form, RFC_EXAMPLE), Some(Duration::ZERO));
            assert_eq!(parse_retry_after(form, u64::MAX), Some(Duration::ZERO));
        }
        // The RFC's other example; asctime's day may also be two digits.
        assert_eq!(
            parse_retry_after(b"Fri, 31 Dec 1999 23:59:59 GMT", 946_684_799 - 10),
            Some(10 * SEC)
        );
        assert_eq!(
            parse_retry_after(b"Sun Nov 06 08:49:37 1994", now),
            Some(3_600 * SEC)
        );
        // Whitespace around the value.
        assert_eq!(
            parse_retry_after(b"  Sun, 06 Nov 1994 08:49:37 GMT\t", now),
            Some(3_600 * SEC)
        );
    }

    #[test]
    fn dates_are_exact_across_the_calendar() {
        // Every day from 1900 to 2100 (leap years, 1900 and 2100 not, 2000 is), against a
        // day-by-day count from 1970.
        let mut unix_days: i64 = -25_567; // 1900-01-01
        for year in 1900u64..=2100 {
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
            for month in 1..=12u64 {
                let days = match month {
                    2 if leap => 29,
                    2 => 28,
                    4 | 6 | 9 | 11 => 30,
                    _ => 31,
                };
                for day in 1..=days {
                    let civil = days_from_civil(year, month, day) as i64 - EPOCH_DAYS as i64;
                    assert_eq!(civil, unix_days, "{year}-{month}-{day}");
                    if unix_days >= 0 {
                        assert_eq!(year_of(unix_days as u64), year);
                    }
                    unix_days += 1;
                }
            }
        }
        assert_eq!(weekday(days_from_civil(1970, 1, 1)), 4);
        assert_eq!(weekday(days_from_civil(1994, 11, 6)), 0);
        assert_eq!(weekday(days_from_civil(0, 1, 1)), 6); // proleptic: a Saturday
    }

    #[test]
    fn leap_days_exist_only_in_leap_years() {
        let at = |date: &[u8]| parse_retry_after(date, 0).map(|d| d.as_secs());
        assert_eq!(at(b"Tue, 29 Feb 2000 00:00:00 GMT"), Some(951_782_400));
        assert_eq!(at(b"Thu, 29 Feb 2024 12:00:00 GMT"), Some(1_709_208_000));
        assert_eq!(at(b"Mon, 29 Feb 2100 00:00:00 GMT"), None); // 2100 is not leap
        assert_eq!(at(b"Thu, 29 Feb 2023 00:00:00 GMT"), None);
        assert_eq!(at(b"Fri, 01 Mar 2024 00:00:00 GMT"), Some(1_709_251_200));
        assert_eq!(at(b"Thu, 31 Apr 2024 00:00:00 GMT"), None);
        assert_eq!(at(b"Sun, 00 Nov 1994 08:49:37 GMT"), None);
        assert_eq!(at(b"Sun, 32 Dec 1994 08:49:37 GMT"), None);
    }

    #[test]
    fn times_are_checked_and_a_leap_second_is_the_next_second() {
        let at = |date: &[u8]| parse_retry_after(date, 0).map(|d| d.as_secs());
        let midnight = at(b"Sat, 01 Jan 2000 00:00:00 GMT").unwrap();
        assert_eq!(at(b"Fri, 31 Dec 1999 23:59:60 GMT"), Some(midnight));
        assert_eq!(at(b"Fri, 31 Dec 1999 24:00:00 GMT"), None);
        assert_eq!(at(b"Fri, 31 Dec 1999 23:60:00 GMT"), None);
        assert_eq!(at(b"Fri, 31 Dec 1999 23:59:61 GMT"), None);
    }

    /// A day name that is not the date's: refused (the date contradicts itself).
    #[test]
    fn a_day_name_that_is_not_the_dates_is_refused() {
        let now = RFC_EXAMPLE - 10;
        assert_eq!(
            parse_retry_after(b"Mon, 06 Nov 1994 08:49:37 GMT", now),
            None
        );
        assert_eq!(
            parse_retry_after(b"Monday, 06-Nov-94 08:49:37 GMT", now),
            None
        );
        assert_eq!(parse_retry_after(b"Sat Nov  6 08:49:37 1994", now), None);
    }

    #[test]
    fn malformed_dates_are_refused() {
        let now = RFC_EXAMPLE - 10;
        for garbage in [
            &b"sun, 06 Nov 1994 08:49:37 GMT"[..], // names are case-sensitive
            b"Sun, 06 nov 1994 08:49:37 GMT",
            b"Sun, 06 Nov 1994 08:49:37 gmt",
            b"Sun, 06 Nov 1994 08:49:37 UTC",
            b"Sun, 06 Nov 1994 08:49:37 +0000",
            b"Sun, 6 Nov 1994 08:49:37 GMT",
            b"Sun, 06 Nov 94 08:49:37 GMT",
            b"Sun,06 Nov 1994 08:49:37 GMT",
            b"Sun, 06 Nov 1994 08:49:37 GMT x",
            b"Sun, 06 Nov 1994 08:49 GMT",
            b"Sun, 06 Nov 1994 8:49:37 GMT",
            b"Sun, 06  Nov 1994 08:49:37 GMT",
            b"Sun, 06 Xyz 1994 08:49:37 GMT",
            b"Sun, 06 Nov 1994 08:49:37",
            b"Sun, 06-Nov-94 08:49:37 GMT", // RFC 850 with a short day name
            b"Sunday, 06 Nov 1994 08:49:37 GMT",
            b"Sunday, 06-Nov-1994 08:49:37 GMT",
            b"Sun Nov 6 08:49:37 1994",
            b"Sun Nov  6 08:49:37 94",
            b"Sun Nov   6 08:49:37 1994",
            b"Sun Nov  6 08:49:37 1994 GMT",
            b"Sun, 06 Nov 1994 08:49:37 GMT\0",
            b"Sun",
            b"GMT",
        ] {
            assert_eq!(
                parse_retry_after(garbage, now),
                None,
                "{}",
                std::string::String::from_utf8_lossy(garbage)
            );
        }
    }

    #[test]
    fn rfc850_years_are_at_most_50_years_ahead() {
        // 2025-06-01: "75" is 2075 (50 years ahead), "76" is 1976 (2076 would be 51).
        let now = 1_748_736_000;
        let secs = |date: &[u8]| {
            parse_retry_after(date, 0).map(|d| d.as_secs()).unwrap() // at the epoch: exact
        };
        let ahead = |date: &[u8]| parse_retry_after(date, now).map(|d| d.as_secs());
        let in_2075 = secs(b"Fri, 01 Mar 2075 00:00:00 GMT");
        assert_eq!(
            ahead(b"Friday, 01-Mar-75 00:00:00 GMT"),
            Some(in_2075 - now)
        );
        assert_eq!(ahead(b"Monday, 01-Mar-76 00:00:00 GMT"), Some(0)); // 1976
        assert_eq!(ahead(b"Sunday, 01-Mar-76 00:00:00 GMT"), None); // 2076's weekday
        assert_eq!(
            ahead(b"Saturday, 01-Mar-25 00:00:00 GMT"),
            Some(0) // 2025, past
        );
        // At the epoch (1970), "19" is 2019 and "21" is 1921.
        assert_eq!(
            parse_retry_after(b"Friday, 01-Mar-19 00:00:00 GMT", 0),
            Some(Duration::from_secs(secs(b"Fri, 01 Mar 2019 00:00:00 GMT")))
        );
        assert_eq!(
            parse_retry_after(b"Tuesday, 01-Mar-21 00:00:00 GMT", 0),
            Some(Duration::ZERO)
        );
        // A wall clock at the end of time: no overflow, and one day name is the date's.
        let named = LONG_DAY_NAMES.iter().filter(|name| {
            let date = [name, &b", 06-Nov-94 08:49:37 GMT"[..]].concat();
            parse_retry_after(&date, u64::MAX).is_some()
        });
        assert_eq!(named.count(), 1);
    }

    #[test]
    fn years_up_to_9999_and_before_the_epoch() {
        assert_eq!(
            parse_retry_after(b"Fri, 31 Dec 9999 23:59:59 GMT", 0),
            Some(Duration::from_secs(253_402_300_799))
        );
        assert_eq!(
            parse_retry_after(b"Sat, 01 Jan 0000 00:00:00 GMT", 0),
            Some(Duration::ZERO)
        );
        assert_eq!(
            parse_retry_after(b"Wed, 31 Dec 1969 23:59:59 GMT", 0),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn grpc_pushback_is_milliseconds_and_garbage_means_stop() {
        assert_eq!(grpc_retry_pushback(b"250"), Duration::from_millis(250));
        assert_eq!(grpc_retry_pushback(b" 0 "), Duration::ZERO);
        assert_eq!(
            grpc_retry_pushback(b"99999999999999999999999"),
            Duration::from_millis(u64::MAX)
        );
        for stop in [&b"-1"[..], b"", b"soon", b"1.5"] {
            assert_eq!(grpc_retry_pushback(stop), Duration::MAX, "{stop:?}");
        }
    }
}
