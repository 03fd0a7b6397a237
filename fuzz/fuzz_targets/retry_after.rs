//! `tower::parse_retry_after` on arbitrary bytes at an arbitrary wall-clock reading (the
//! first 8 bytes): it never panics; a value of digits is its decimal number, saturated;
//! an IMF-fixdate or asctime date's delay is the same instant at any reading (it shrinks
//! as the clock advances, by as much, down to zero); and the instant the bytes name
//! (any second from 1970 to 9999), written in each of the RFC's three forms by a
//! formatter of its own, parses to the seconds from now to it, and with the wrong day name
//! to nothing; a minute's start written as the leap second ending the minute before
//! (`23:59:60`) is that instant.
#![no_main]

use core::time::Duration;

use libfuzzer_sys::fuzz_target;
use tailguard::tower::parse_retry_after;

/// The first second after 9999-12-31 23:59:59 UTC.
const YEAR_10000: u64 = 253_402_300_800;
/// 49 years of 365 days: less than 49 calendar years, whatever the leap days.
const YEARS_49: u64 = 49 * 365 * 86_400;

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const LONG_DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

fuzz_target!(|data: &[u8]| {
    let (head, value) = data.split_at(data.len().min(8));
    let mut word = [0u8; 8];
    word[..head.len()].copy_from_slice(head);
    let now = u64::from_le_bytes(word);

    let parsed = parse_retry_after(value, now);
    let trimmed = trim_ows(value);
    let digits = !trimmed.is_empty() && trimmed.iter().all(u8::is_ascii_digit);
    if digits {
        assert_eq!(parsed, Some(Duration::from_secs(decimal(trimmed))));
    } else if let Some(delay) = parsed {
        // A date. IMF-fixdate and asctime name their year in full: the same instant at a
        // later reading (an RFC 850 date's century moves with the clock).
        let rfc850 = LONG_DAYS.iter().any(|day| {
            trimmed
                .strip_prefix(day.as_bytes())
                .is_some_and(|rest| rest.starts_with(b","))
        });
        if !rfc850 {
            let step = u64::from(value.first().copied().unwrap_or(0)) << 20;
            let later = parse_retry_after(value, now.saturating_add(step));
            let moved = now.saturating_add(step) - now;
            assert_eq!(
                later,
                Some(Duration::from_secs(delay.as_secs().saturating_sub(moved)))
            );
        }
    }

    // The instant the reading names, in 1970 ..= 9999, written by `civil` below; and the
    // start of its minute written as the minute before's leap second (`hh:mm:60`).
    let at = now % YEAR_10000;
    let back = u64::from_le_bytes(tail_word(value)) % YEARS_49;
    let minute = at - at % 60;
    for reader in [at.saturating_sub(back), at + back] {
        for wrong in [false, true] {
            let want = (!wrong).then_some(Duration::from_secs(at.saturating_sub(reader)));
            for form in forms(at, wrong, false) {
                assert_eq!(
                    parse_retry_after(form.as_bytes(), reader),
                    want,
                    "{form} at {reader}"
                );
            }
        }
        if minute > 0 {
            let want = Some(Duration::from_secs(minute.saturating_sub(reader)));
            for form in forms(minute - 1, false, true) {
                assert_eq!(
                    parse_retry_after(form.as_bytes(), reader),
                    want,
                    "{form} at {reader}"
                );
            }
        }
    }
});

/// `t` (seconds after 1970-01-01 UTC) in the RFC's three forms, with the day name after
/// the date's if `wrong`, and the second written as 60 if `leap` (`t` ends a minute).
fn forms(t: u64, wrong: bool, leap: bool) -> [String; 3] {
    let (year, month, day, secs, weekday) = civil(t);
    let (h, m) = (secs / 3_600, secs / 60 % 60);
    let s = if leap { 60 } else { secs % 60 };
    let mon = MONTHS[month];
    let wd = if wrong { (weekday + 1) % 7 } else { weekday };
    [
        format!(
            "{}, {day:02} {mon} {year:04} {h:02}:{m:02}:{s:02} GMT",
            DAYS[wd]
        ),
        format!(
            "{}, {day:02}-{mon}-{:02} {h:02}:{m:02}:{s:02} GMT",
            LONG_DAYS[wd],
            year % 100
        ),
        format!("{} {mon} {day:>2} {h:02}:{m:02}:{s:02} {year:04}", DAYS[wd]),
    ]
}

/// `value` without the spaces and tabs around it (HTTP's optional whitespace).
fn trim_ows(value: &[u8]) -> &[u8] {
    let ows = |b: &u8| *b == b' ' || *b == b'\t';
    let start = value.iter().position(|b| !ows(b)).unwrap_or(value.len());
    let end = value.iter().rposition(|b| !ows(b)).map_or(start, |i| i + 1);
    &value[start..end]
}

/// Digits as a number, saturating at `u64::MAX`.
fn decimal(digits: &[u8]) -> u64 {
    let significant = digits.iter().skip_while(|d| **d == b'0').count();
    if significant > 20 {
        return u64::MAX;
    }
    let n = digits
        .iter()
        .fold(0u128, |n, d| n * 10 + u128::from(d - b'0'));
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// The last 8 bytes of `value` (zeros in front of a shorter one).
fn tail_word(value: &[u8]) -> [u8; 8] {
    let mut word = [0u8; 8];
    let tail = &value[value.len().saturating_sub(8)..];
    word[8 - tail.len()..].copy_from_slice(tail);
    word
}

/// The year, month (0 to 11), day, second of the day and weekday (0 is Sunday) of `t`
/// seconds after 1970-01-01 UTC, counted year by year and month by month (a formatter
/// that shares nothing with the parser's calendar).
fn civil(t: u64) -> (u64, usize, u64, u64, usize) {
    let (mut days, secs) = (t / 86_400, t % 86_400);
    let weekday = ((days + 4) % 7) as usize; // 1970-01-01 was a Thursday
    let leap = |y: u64| y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let mut year = 1970;
    while days >= if leap(year) { 366 } else { 365 } {
        days -= if leap(year) { 366 } else { 365 };
        year += 1;
    }
    let lengths = [
        31,
        if leap(year) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let mut month = 0;
    while days >= lengths[month] {
        days -= lengths[month];
        month += 1;
    }
    (year, month, days + 1, secs, weekday)
}
