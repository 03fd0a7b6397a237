//! Hedgers (`tg_hedger`): the adaptive hedging policy with its window and ratio budget,
//! and the tickets (`tg_ticket`) of the requests it decides for.
//!
//! Called through `const tg_hedger *`: one hedger may serve an interrupt and the main
//! loop at once (the crate's lock-free `Hedger`). A ticket belongs to one request and is
//! used by one caller at a time.

use core::time::Duration;

use tailguard::budget::RatioBudget;
use tailguard::clock::Instant;
use tailguard::deadline::Deadline;
use tailguard::hedge::{
    Attempt, ColdStart, CubicHedger, Decision, HedgeConfig, Hedger, IntHedger, LogHedger,
    McuHedger, SkipReason, Ticket, MAX_HEDGES,
};
use tailguard::sketch::{presets, BinLayout, IndexMapping};

use crate::clock::{nanos, tg_clock, CallbackClock};
use crate::object::{self, fits, magic, Handle, Image, In, Kind, Out, Preset, Storage};
use crate::status::{
    status_of, tg_status, Result, TG_ERR_CONFIG, TG_ERR_EMPTY, TG_ERR_MISMATCH, TG_ERR_PRESET,
    TG_ERR_UNINIT, TG_ERR_VALUE,
};

/// A hedger in caller storage (opaque): the handle `tg_hedger_init` returns.
#[allow(non_camel_case_types)]
pub struct tg_hedger {
    _opaque: [u8; 0],
}

/// The most hedges a request may have, and the most percentiles a configuration holds.
pub const TG_MAX_HEDGES: usize = 2;
const _: () = assert!(TG_MAX_HEDGES == MAX_HEDGES as usize);

/// A hedger's configuration; `tg_hedge_config_default` fills in the defaults.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
#[allow(non_camel_case_types)]
pub struct tg_hedge_config {
    /// The hedge percentiles, each in (0, 1), rising (default p90); the first
    /// `percentile_count` are used.
    pub percentiles: [f64; TG_MAX_HEDGES],
    /// 1 (the default): `percentiles[0]` for every hedge, spaced by its delay; 2: a
    /// percentile per hedge (then `max_hedges` is 2 and its field is ignored).
    pub percentile_count: u32,
    /// Hedges per request, 1 or 2 (default 1).
    pub max_hedges: u32,
    /// The window's interval, in ns (default 30 s).
    pub interval_ns: u64,
    /// The shortest hedge delay, in ns (default 1 ms).
    pub min_delay_ns: u64,
    /// The longest hedge delay, in ns (default 30 s).
    pub max_delay_ns: u64,
    /// The delay before `min_samples` latencies are known, in ns; 0 (the default): no
    /// hedge until then.
    pub cold_start_delay_ns: u64,
    /// Budget tokens each request deposits (default 0.1: hedges are at most 10 %).
    pub budget_ratio: f64,
    /// The on-time rule's chance, in (0, 1); 0 (the default): off.
    pub on_time_chance: f64,
    /// How long a rate-limit signal raises the delay, in ns (default 10 s).
    pub cooldown_ns: u64,
    /// The longest server pushback honoured, in ns (default 60 s).
    pub max_pushback_ns: u64,
    /// Latencies needed before the percentile is trusted (default 20).
    pub min_samples: u32,
    /// The most budget tokens saved up (default 50; 1 to 4294).
    pub budget_cap: u32,
    /// The delay's multiplier during a back-off (default 2).
    pub backoff_factor: u32,
    /// Non-zero (the default): recording a latency may rotate the window; 0: rotations
    /// wait for `tg_hedger_start` (bounded work in `tg_hedger_on_success`).
    pub rotate_on_record: u8,
}

impl tg_hedge_config {
    /// The crate's defaults.
    fn defaults() -> Self {
        let c = HedgeConfig::new();
        let mut percentiles = [c.percentile(); TG_MAX_HEDGES];
        for (p, q) in percentiles.iter_mut().zip(c.percentiles()) {
            *p = *q;
        }
        tg_hedge_config {
            percentiles,
            percentile_count: 1,
            max_hedges: u32::from(c.max_hedges()),
            interval_ns: nanos(c.interval()),
            min_delay_ns: nanos(c.min_delay()),
            max_delay_ns: nanos(c.max_delay()),
            cold_start_delay_ns: match c.cold_start() {
                ColdStart::NoHedge => 0,
                ColdStart::Delay(d) => nanos(d),
            },
            budget_ratio: c.budget_ratio(),
            on_time_chance: c.on_time_chance().unwrap_or(0.0),
            cooldown_ns: nanos(c.cooldown()),
            max_pushback_ns: nanos(c.max_pushback()),
            min_samples: c.min_samples(),
            budget_cap: c.budget_cap(),
            backoff_factor: c.backoff_factor(),
            rotate_on_record: u8::from(c.rotate_on_record()),
        }
    }

    /// The crate's configuration (the rest is checked when the hedger is built).
    fn to_config(self) -> Result<HedgeConfig> {
        let ns = Duration::from_nanos;
        let mut c = HedgeConfig::new();
        c = match self.percentile_count {
            1 => {
                let hedges = u8::try_from(self.max_hedges).map_err(|_| TG_ERR_CONFIG)?;
                let [first, ..] = self.percentiles;
                c.with_percentile(first).with_max_hedges(hedges)
            }
            2 => c.with_percentiles(&self.percentiles),
            _ => return Err(TG_ERR_CONFIG),
        };
        c = c
            .with_interval(ns(self.interval_ns))
            .with_min_delay(ns(self.min_delay_ns))
            .with_max_delay(ns(self.max_delay_ns))
            .with_min_samples(self.min_samples)
            .with_cold_start(match self.cold_start_delay_ns {
                0 => ColdStart::NoHedge,
                d => ColdStart::Delay(ns(d)),
            })
            .with_budget_ratio(self.budget_ratio)
            .with_budget_cap(self.budget_cap)
            .with_cooldown(ns(self.cooldown_ns))
            .with_backoff_factor(self.backoff_factor)
            .with_rotate_on_record(self.rotate_on_record != 0)
            .with_max_pushback(ns(self.max_pushback_ns));
        if self.on_time_chance != 0.0 {
            c = c.with_on_time_chance(self.on_time_chance);
        }
        Ok(c)
    }
}

/// Bytes of storage a `TG_PRESET_LOG` hedger needs, on every supported target.
pub const TG_HEDGER_LOG_SIZE: usize = 11968;
/// Bytes of storage a `TG_PRESET_CUBIC` hedger needs, on every supported target.
pub const TG_HEDGER_CUBIC_SIZE: usize = 12096;
/// Bytes of storage a `TG_PRESET_INT` hedger needs, on every supported target.
pub const TG_HEDGER_INT_SIZE: usize = 21248;
/// Bytes of storage a `TG_PRESET_MCU` hedger needs, on every supported target.
pub const TG_HEDGER_MCU_SIZE: usize = 7248;

type LogH = LogHedger<CallbackClock>;
type CubicH = CubicHedger<CallbackClock>;
type IntH = IntHedger<CallbackClock>;
type McuH = McuHedger<CallbackClock>;

const _: () = assert!(fits::<LogH>(TG_HEDGER_LOG_SIZE));
const _: () = assert!(fits::<CubicH>(TG_HEDGER_CUBIC_SIZE));
const _: () = assert!(fits::<IntH>(TG_HEDGER_INT_SIZE));
const _: () = assert!(fits::<McuH>(TG_HEDGER_MCU_SIZE));

/// The hedger of `layout` that `tg_hedger_init` copies into the storage before it gives
/// it the caller's clock, configuration and budget.
const fn image<M: IndexMapping, const N: usize>(
    layout: BinLayout<M, N>,
) -> Hedger<CallbackClock, RatioBudget, M, N> {
    let config = HedgeConfig::new();
    let clock = CallbackClock::UNSET;
    // The defaults: not refused (and, at compile time, a refusal is a build error).
    #[allow(clippy::panic)]
    let budget = match RatioBudget::new(config.budget_ratio(), config.budget_cap()) {
        Ok(budget) => budget,
        Err(_) => panic!("the default budget is refused"),
    };
    #[allow(clippy::panic)]
    match Hedger::with_origin(clock, config, budget, layout, Instant::ZERO) {
        Ok(hedger) => hedger,
        Err(_) => panic!("the default hedge configuration is refused"),
    }
}

impl Image for LogH {
    const IMAGE: Self = image(presets::LOG_LATENCY_LAYOUT);
}
impl Image for CubicH {
    const IMAGE: Self = image(presets::CUBIC_LATENCY_LAYOUT);
}
impl Image for IntH {
    const IMAGE: Self = image(presets::INT_LATENCY_LAYOUT);
}
impl Image for McuH {
    const IMAGE: Self = image(presets::MCU_LATENCY_LAYOUT);
}

/// Gives the hedger (a copied image) the caller's clock, configuration and budget: what
/// `with_layout` would build, in place.
fn set_up<M: IndexMapping, const N: usize>(
    hedger: &mut Hedger<CallbackClock, RatioBudget, M, N>,
    clock: CallbackClock,
    config: HedgeConfig,
    budget: RatioBudget,
) -> Result<()> {
    hedger
        .reset(clock, config, budget)
        .map_err(|_| TG_ERR_CONFIG)
}

/// Runs `$body` with `$x` bound to the hedger of the [`Handle`] `$h` as its preset's type
/// and `$p` to its preset code; `?` on a bad handle. One arm per preset (see `with_sketch`).
macro_rules! with_hedger {
    ($h:ident, |$x:ident, $p:pat_param| $body:expr) => {{
        let code = $h.preset(Kind::Hedger)?;
        #[allow(unused_variables)]
        let $p = code;
        // SAFETY (every arm): the magic names the preset, so the object is of its type; a
        // hedger is used through shared references only.
        match Preset::from_u32(code)? {
            #[cfg(feature = "preset-log")]
            Preset::Log => {
                // SAFETY: the magic names this arm's preset (see above).
                let $x = unsafe { $h.value::<LogH>() };
                $body
            }
            #[cfg(feature = "preset-cubic")]
            Preset::Cubic => {
                // SAFETY: the magic names this arm's preset (see above).
                let $x = unsafe { $h.value::<CubicH>() };
                $body
            }
            #[cfg(feature = "preset-int")]
            Preset::Int => {
                // SAFETY: the magic names this arm's preset (see above).
                let $x = unsafe { $h.value::<IntH>() };
                $body
            }
            #[cfg(feature = "preset-mcu")]
            Preset::Mcu => {
                // SAFETY: the magic names this arm's preset (see above).
                let $x = unsafe { $h.value::<McuH>() };
                $body
            }
            // No window or hedger of these (a preset compiled out is not in the enum).
            #[allow(unreachable_patterns)]
            _ => return Err(TG_ERR_PRESET),
        }
    }};
}

/// Fills `*config` with the defaults: hedge at the p90 of the last 30-60 s, between 1 ms
/// and 30 s, after 20 samples, once per request, within 10 % of requests (50 saved up).
/// Returns TG_OK, TG_ERR_NULL or TG_ERR_MISALIGNED.
#[no_mangle]
pub unsafe extern "C" fn tg_hedge_config_default(config: *mut tg_hedge_config) -> tg_status {
    // SAFETY: the contract (crate docs) for `config`.
    let config = unsafe { Out::new(config) };
    status_of(config.map(|config| config.set(tg_hedge_config::defaults())))
}

/// Initialises a hedger of `preset` (TG_PRESET_LOG, _CUBIC, _INT or _MCU) reading
/// `clock`, configured by `*config` (null: the defaults), with a ratio budget of the
/// configuration's ratio and cap, in `size` bytes at `storage` (aligned to `TG_ALIGN`,
/// at least `TG_HEDGER_<PRESET>_SIZE`), and writes its handle to `*out`. No other call may
/// use the storage while this runs (an init again, to reset the hedger, included).
/// Returns TG_OK, TG_ERR_NULL (also for a null `clock.now_ns`), TG_ERR_MISALIGNED,
/// TG_ERR_SIZE, TG_ERR_PRESET or TG_ERR_CONFIG (the storage may then hold no object).
#[no_mangle]
pub unsafe extern "C" fn tg_hedger_init(
    storage: *mut core::ffi::c_void,
    size: usize,
    preset: u32,
    clock: tg_clock,
    config: *const tg_hedge_config,
    out: *mut *mut tg_hedger,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `out`, `config` and the `size` bytes at
    // `storage`.
    let (out, config, storage) =
        unsafe { (Out::new(out), In::new(config), Storage::new(storage, size)) };
    status_of((|| {
        let out = out?;
        let clock = CallbackClock::new(clock)?;
        let config = config.read_or(tg_hedge_config::defaults)?.to_config()?;
        let (k, p) = (Kind::Hedger, preset);
        // Checked before the storage is written; the rest of `config` is checked by
        // `reset`, after the image is written (a refusal leaves no hedger there).
        let budget = RatioBudget::new(config.budget_ratio(), config.budget_cap())
            .map_err(|_| TG_ERR_CONFIG)?;
        // The preset's constant image (its layout, a placeholder clock), then the
        // caller's clock, configuration and budget, in place: no hedger on the stack.
        let handle = match Preset::from_u32(preset)? {
            #[cfg(feature = "preset-log")]
            Preset::Log => {
                object::init_image::<LogH>(storage, k, p, |h| set_up(h, clock, config, budget))?
            }
            #[cfg(feature = "preset-cubic")]
            Preset::Cubic => {
                object::init_image::<CubicH>(storage, k, p, |h| set_up(h, clock, config, budget))?
            }
            #[cfg(feature = "preset-int")]
            Preset::Int => {
                object::init_image::<IntH>(storage, k, p, |h| set_up(h, clock, config, budget))?
            }
            #[cfg(feature = "preset-mcu")]
            Preset::Mcu => {
                object::init_image::<McuH>(storage, k, p, |h| set_up(h, clock, config, budget))?
            }
            // No window or hedger of these (a preset compiled out is not in the enum).
            #[allow(unreachable_patterns)]
            _ => return Err(TG_ERR_PRESET),
        };
        out.set(handle.cast());
        Ok(())
    })())
}

/// The words of a ticket.
pub const TG_TICKET_WORDS: usize = 8;

/// One request's hedging state, in caller storage (by value; opaque). Written by
/// `tg_hedger_start`, it starts with a magic word and names its hedger: any other bytes
/// (zeroed, garbage, another hedger's ticket) are refused. C copies it as any struct; in
/// Rust it is not `Copy`, as the ticket's padding bytes are uninitialised there.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct tg_ticket {
    /// Opaque.
    pub opaque: [u64; TG_TICKET_WORDS],
}

/// What a `tg_ticket` holds.
#[repr(C)]
struct TicketSlot {
    magic: u64,
    /// The hedger's address, mixed so that a zeroed word never matches.
    owner: u64,
    ticket: Ticket,
}

const _: () = assert!(core::mem::size_of::<TicketSlot>() <= core::mem::size_of::<tg_ticket>());
const _: () = assert!(core::mem::align_of::<TicketSlot>() <= core::mem::align_of::<tg_ticket>());

/// The owner word of tickets of the hedger at `h`.
fn owner(h: &Handle) -> u64 {
    (h.addr() as u64) ^ 0x7469_636b_6574_2121
}

/// Writes `ticket`, of the hedger at `h` (of preset `preset`), to `t` (checked).
fn put_ticket(t: Out<tg_ticket>, h: &Handle, preset: u32, ticket: Ticket) {
    let slot = TicketSlot {
        magic: magic(Kind::Ticket, preset),
        owner: owner(h),
        ticket,
    };
    // SAFETY: `Out` checked `t` (not null, aligned to tg_ticket, so to TicketSlot as
    // const-asserted) and vouches for a write of a tg_ticket, which a TicketSlot fits
    // (asserted).
    unsafe { t.into_ptr().cast::<TicketSlot>().write(slot) };
}

/// A ticket argument, shared: vouched for by the caller's contract (crate docs) when made,
/// checked (null, alignment, magic, owner) before its ticket is used.
struct TicketRef(*const tg_ticket);

impl TicketRef {
    /// The ticket at `t`; nothing is checked yet.
    ///
    /// # Safety
    /// The caller's contract for a ticket: `t` is null, misaligned, or valid for reads of
    /// a `tg_ticket` that nothing writes while the `TicketRef` lives; if its first two
    /// words are a ticket's, `tg_hedger_start` wrote it.
    unsafe fn new(t: *const tg_ticket) -> Self {
        TicketRef(t)
    }

    /// The slot of the ticket, checked to be one of the hedger at `h`, of preset `preset`.
    fn slot(&self, h: &Handle, preset: u32) -> Result<*const TicketSlot> {
        object::check_ptr(self.0, core::mem::align_of::<tg_ticket>())?;
        let slot = self.0.cast::<TicketSlot>();
        // SAFETY: not null, aligned, and readable by `new`'s contract; u64 words have no
        // invalid values, and the magic is checked before the ticket is.
        let (m, o) = unsafe { ((*slot).magic, (*slot).owner) };
        if m & !0xffff != magic(Kind::Ticket, 0) {
            return Err(TG_ERR_UNINIT);
        }
        if m != magic(Kind::Ticket, preset) || o != owner(h) {
            return Err(TG_ERR_MISMATCH);
        }
        Ok(slot)
    }

    /// The ticket, checked to be one of the hedger at `h`, of preset `preset`.
    fn get(&self, h: &Handle, preset: u32) -> Result<&Ticket> {
        let slot = self.slot(h, preset)?;
        // SAFETY: the magic and the owner say `tg_hedger_start` wrote a ticket here
        // (`new`'s contract), which nothing writes while `self` lives.
        Ok(unsafe { &(*slot).ticket })
    }
}

/// A ticket argument, exclusive: [`TicketRef`] for a ticket the call may change.
struct TicketMut(*mut tg_ticket);

impl TicketMut {
    /// The ticket at `t`; nothing is checked yet.
    ///
    /// # Safety
    /// As [`TicketRef::new`], `t` is writable, and nothing else uses the ticket while the
    /// `TicketMut` lives.
    unsafe fn new(t: *mut tg_ticket) -> Self {
        TicketMut(t)
    }

    /// The ticket, checked as [`TicketRef::get`], exclusive.
    fn get(&mut self, h: &Handle, preset: u32) -> Result<&mut Ticket> {
        // SAFETY: `TicketMut::new`'s contract includes `TicketRef::new`'s, for as long.
        let slot = unsafe { TicketRef::new(self.0) }
            .slot(h, preset)?
            .cast_mut();
        // SAFETY: as `TicketRef::get`; `slot` comes from the writable `t`, which nothing
        // else uses (`new`'s contract), and `&mut self` keeps this reference the only one.
        Ok(unsafe { &mut (*slot).ticket })
    }
}

/// Starts a request: writes its ticket to `*ticket` (deposits into the budget, counts the
/// request, keeps the window current).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_hedger_start(h: *const tg_hedger, ticket: *mut tg_ticket) -> tg_status {
    // SAFETY: the contract (crate docs) for `h` and `ticket`.
    let (h, out) = unsafe { (Handle::new(h), Out::new(ticket)) };
    status_of((|| {
        let out = out?;
        with_hedger!(h, |x, preset| put_ticket(out, &h, preset, x.start()));
        Ok(())
    })())
}

/// Starts a request that must be over by `deadline_ns` (on the hedger's clock): no hedge
/// is sent that could not finish by then.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_hedger_start_with_deadline(
    h: *const tg_hedger,
    deadline_ns: u64,
    ticket: *mut tg_ticket,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `h` and `ticket`.
    let (h, out) = unsafe { (Handle::new(h), Out::new(ticket)) };
    status_of((|| {
        let out = out?;
        let deadline = Deadline::at(Instant::from_nanos(deadline_ns));
        with_hedger!(h, |x, preset| put_ticket(
            out,
            &h,
            preset,
            x.start_with_deadline(deadline)
        ));
        Ok(())
    })())
}

/// Waiting: ask again after `wait_ns`.
pub const TG_DECISION_WAIT: u32 = 0;
/// Send a backup now (its budget token is taken).
pub const TG_DECISION_HEDGE: u32 = 1;
/// Do not hedge this request: `skip_reason` says why.
pub const TG_DECISION_SKIP: u32 = 2;

/// No skip (the decision is not TG_DECISION_SKIP).
pub const TG_SKIP_NONE: u32 = 0;
/// The budget has no token.
pub const TG_SKIP_BUDGET: u32 = 1;
/// Too few latencies are known (and no cold-start delay).
pub const TG_SKIP_COLD_START: u32 = 2;
/// A backup could not finish before the request's deadline.
pub const TG_SKIP_DEADLINE: u32 = 3;
/// A rate-limit signal came recently and the budget is empty, or a pushback holds.
pub const TG_SKIP_BACK_PRESSURE: u32 = 4;
/// The request already has `max_hedges` hedges.
pub const TG_SKIP_MAX_HEDGES: u32 = 5;
/// A reason this version of the header does not name.
pub const TG_SKIP_OTHER: u32 = 6;

/// What to do about a request now (`tg_hedger_should_hedge`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub struct tg_decision {
    /// TG_DECISION_WAIT, _HEDGE or _SKIP.
    pub kind: u32,
    /// With TG_DECISION_SKIP, a TG_SKIP_* reason; TG_SKIP_NONE otherwise.
    pub skip_reason: u32,
    /// With TG_DECISION_WAIT, how long to wait before asking again, in ns; 0 otherwise.
    pub wait_ns: u64,
}

impl tg_decision {
    fn of(d: Decision) -> Self {
        let (kind, skip_reason, wait_ns) = match d {
            Decision::Wait(w) => (TG_DECISION_WAIT, TG_SKIP_NONE, nanos(w)),
            Decision::Hedge => (TG_DECISION_HEDGE, TG_SKIP_NONE, 0),
            Decision::Skip(reason) => (TG_DECISION_SKIP, skip_code(reason), 0),
        };
        tg_decision {
            kind,
            skip_reason,
            wait_ns,
        }
    }
}

fn skip_code(reason: SkipReason) -> u32 {
    match reason {
        SkipReason::Budget => TG_SKIP_BUDGET,
        SkipReason::ColdStart => TG_SKIP_COLD_START,
        SkipReason::Deadline => TG_SKIP_DEADLINE,
        SkipReason::BackPressure => TG_SKIP_BACK_PRESSURE,
        SkipReason::MaxHedges => TG_SKIP_MAX_HEDGES,
        _ => TG_SKIP_OTHER,
    }
}

/// Decides whether to hedge the request of `*ticket` now, and writes the decision to
/// `*decision` (a hedge is counted in the ticket).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT (hedger or ticket) or
/// TG_ERR_MISMATCH (a ticket of another hedger).
#[no_mangle]
pub unsafe extern "C" fn tg_hedger_should_hedge(
    h: *const tg_hedger,
    ticket: *mut tg_ticket,
    decision: *mut tg_decision,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `h`, `ticket` and `decision`.
    let (h, mut ticket, out) =
        unsafe { (Handle::new(h), TicketMut::new(ticket), Out::new(decision)) };
    status_of((|| {
        let out = out?;
        let d = with_hedger!(h, |x, preset| x.should_hedge(ticket.get(&h, preset)?));
        out.set(tg_decision::of(d));
        Ok(())
    })())
}

/// The attempt numbered `attempt`: 0 the primary, k the k-th hedge.
fn attempt(attempt: u32) -> Result<Attempt> {
    match attempt {
        0 => Ok(Attempt::Primary),
        k => u8::try_from(k)
            .map(Attempt::Hedge)
            .map_err(|_| TG_ERR_VALUE),
    }
}

/// Reports that `attempt` (0: the primary, k: the k-th hedge) answered the request of
/// `*ticket` first: records its latency and writes it to `*latency_ns` (may be null).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT, TG_ERR_MISMATCH or
/// TG_ERR_VALUE (`attempt` above 255).
#[no_mangle]
pub unsafe extern "C" fn tg_hedger_on_success(
    h: *const tg_hedger,
    ticket: *const tg_ticket,
    attempt: u32,
    latency_ns: *mut u64,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `h`, `ticket` and `latency_ns`.
    let (h, ticket, out) =
        unsafe { (Handle::new(h), TicketRef::new(ticket), Out::new(latency_ns)) };
    status_of((|| {
        let out = if latency_ns.is_null() {
            None
        } else {
            Some(out?)
        };
        let latency = with_hedger!(h, |x, preset| {
            let ticket = ticket.get(&h, preset)?;
            x.on_success(ticket, self::attempt(attempt)?)
        });
        if let Some(out) = out {
            out.set(nanos(latency));
        }
        Ok(())
    })())
}

/// Reports that `attempt` (0: the primary, k: the k-th hedge) failed; nothing is recorded
/// as latency (a failed primary is noted in the ticket).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT, TG_ERR_MISMATCH or
/// TG_ERR_VALUE (`attempt` above 255).
#[no_mangle]
pub unsafe extern "C" fn tg_hedger_on_error(
    h: *const tg_hedger,
    ticket: *mut tg_ticket,
    attempt: u32,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `h` and `ticket`.
    let (h, mut ticket) = unsafe { (Handle::new(h), TicketMut::new(ticket)) };
    status_of((|| {
        with_hedger!(h, |x, preset| {
            let ticket = ticket.get(&h, preset)?;
            x.on_error(ticket, self::attempt(attempt)?)
        });
        Ok(())
    })())
}

/// Reports back-pressure (HTTP 429, gRPC RESOURCE_EXHAUSTED): empties the budget and
/// raises the delay for the cooldown.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_hedger_on_rate_limited(h: *const tg_hedger) -> tg_status {
    // SAFETY: the contract (crate docs) for `h`.
    let h = unsafe { Handle::new(h) };
    status_of((|| {
        with_hedger!(h, |x, _| x.on_rate_limited());
        Ok(())
    })())
}

/// Reports back-pressure with the server's delay (`Retry-After`), in ns: as
/// `tg_hedger_on_rate_limited`, and no hedge for that long (at most `max_pushback_ns`).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_hedger_on_rate_limited_for(
    h: *const tg_hedger,
    pushback_ns: u64,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `h`.
    let h = unsafe { Handle::new(h) };
    status_of((|| {
        with_hedger!(h, |x, _| x
            .on_rate_limited_for(Duration::from_nanos(pushback_ns)));
        Ok(())
    })())
}

/// Reports that the request of `*ticket` ran out of time with no answer (counted; nothing
/// recorded).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT or TG_ERR_MISMATCH.
#[no_mangle]
pub unsafe extern "C" fn tg_hedger_on_deadline_exceeded(
    h: *const tg_hedger,
    ticket: *const tg_ticket,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `h` and `ticket`.
    let (h, ticket) = unsafe { (Handle::new(h), TicketRef::new(ticket)) };
    status_of((|| {
        with_hedger!(h, |x, preset| x
            .on_deadline_exceeded(ticket.get(&h, preset)?));
        Ok(())
    })())
}

/// Records a latency measured elsewhere, in ns, into the hedger's window.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_hedger_record(h: *const tg_hedger, latency_ns: u64) -> tg_status {
    // SAFETY: the contract (crate docs) for `h`.
    let h = unsafe { Handle::new(h) };
    status_of((|| {
        with_hedger!(h, |x, _| x.record(Duration::from_nanos(latency_ns)));
        Ok(())
    })())
}

/// Writes the hedge delay now, in ns, to `*out`.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT or TG_ERR_EMPTY (not
/// learned yet without a cold-start delay, or a server's pushback holds hedging off).
#[no_mangle]
pub unsafe extern "C" fn tg_hedger_delay(h: *const tg_hedger, out: *mut u64) -> tg_status {
    // SAFETY: the contract (crate docs) for `h` and `out`.
    let (h, out) = unsafe { (Handle::new(h), Out::new(out)) };
    status_of((|| {
        let out = out?;
        let delay = with_hedger!(h, |x, _| x.delay()).map_err(|_| TG_ERR_EMPTY)?;
        out.set(nanos(delay));
        Ok(())
    })())
}

/// A hedger's counters (`tg_hedger_stats`); each wraps at 2^32.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub struct tg_hedge_stats {
    /// Requests started.
    pub requests: u32,
    /// Hedges sent.
    pub hedges: u32,
    /// Requests a hedge won.
    pub hedge_wins: u32,
    /// Requests the primary won.
    pub primary_wins: u32,
    /// Hedges the budget refused.
    pub denied_budget: u32,
    /// Hedges skipped during the cold start.
    pub skipped_cold: u32,
    /// Hedges skipped because they could not finish before the deadline.
    pub skipped_deadline: u32,
    /// Hedges refused while backing off after a rate-limit signal.
    pub skipped_backpressure: u32,
    /// Attempts that failed.
    pub errors: u32,
    /// Rate-limit signals received.
    pub rate_limited: u32,
    /// Rate-limit signals with the server's delay.
    pub pushbacks: u32,
    /// Pushbacks shortened to `max_pushback_ns`.
    pub pushbacks_clamped: u32,
    /// Requests given up at their deadline.
    pub deadline_exceeded: u32,
    /// 1 if `delay_ns` holds the hedge delay now, 0 if there is none (cold start, pushback).
    pub has_delay: u32,
    /// The hedge delay now, in ns (0 without one).
    pub delay_ns: u64,
}

/// Writes the hedger's counters and its delay now to `*out`.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_hedger_stats(
    h: *const tg_hedger,
    out: *mut tg_hedge_stats,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `h` and `out`.
    let (h, out) = unsafe { (Handle::new(h), Out::new(out)) };
    status_of((|| {
        let out = out?;
        let s = with_hedger!(h, |x, _| x.stats());
        out.set(tg_hedge_stats {
            requests: s.requests,
            hedges: s.hedges,
            hedge_wins: s.hedge_wins,
            primary_wins: s.primary_wins,
            denied_budget: s.denied_budget,
            skipped_cold: s.skipped_cold,
            skipped_deadline: s.skipped_deadline,
            skipped_backpressure: s.skipped_backpressure,
            errors: s.errors,
            rate_limited: s.rate_limited,
            pushbacks: s.pushbacks,
            pushbacks_clamped: s.pushbacks_clamped,
            deadline_exceeded: s.deadline_exceeded,
            has_delay: u32::from(s.delay.is_some()),
            delay_ns: s.delay.map_or(0, nanos),
        });
        Ok(())
    })())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::tests::manual;
    use crate::object::TG_PRESET_MCU;
    use crate::status::TG_OK;
    use core::ptr::null_mut;
    use core::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn wait_hedge_success_and_tickets_are_checked() {
        let time = AtomicU64::new(0);
        let mut mem = std::vec![0u64; TG_HEDGER_MCU_SIZE / 8];
        let mut config = tg_hedge_config::defaults();
        config.min_samples = 4;
        config.min_delay_ns = 100_000;
        let mut h = null_mut();
        let mut t = tg_ticket {
            opaque: [0; TG_TICKET_WORDS],
        };
        let mut d = tg_decision {
            kind: 9,
            skip_reason: 9,
            wait_ns: 9,
        };
        let mut stats = tg_hedge_stats::default();
        let mut latency = 0;
        let tick = |ns| time.fetch_add(ns, Ordering::Relaxed);
        // SAFETY: storage and out-pointers are locals that outlive the handle's uses.
        unsafe {
            let p = mem.as_mut_ptr().cast();
            let size = mem.len() * 8;
            let mut bad = config;
            bad.percentile_count = 3;
            assert_eq!(
                tg_hedger_init(p, size, TG_PRESET_MCU, manual(&time), &bad, &mut h),
                TG_ERR_CONFIG
            );
            assert_eq!(
                tg_hedger_init(p, size, TG_PRESET_MCU, manual(&time), &config, &mut h),
                TG_OK
            );
            assert_eq!(tg_hedger_should_hedge(h, &mut t, &mut d), TG_ERR_UNINIT);
            for _ in 0..4 {
                assert_eq!(tg_hedger_start(h, &mut t), TG_OK);
                tick(800_000);
                assert_eq!(tg_hedger_on_success(h, &t, 0, &mut latency), TG_OK);
                assert_eq!(latency, 800_000);
            }
            assert_eq!(tg_hedger_start(h, &mut t), TG_OK);
            assert_eq!(tg_hedger_should_hedge(h, &mut t, &mut d), TG_OK);
            assert_eq!((d.kind, d.skip_reason), (TG_DECISION_WAIT, TG_SKIP_NONE));
            tick(d.wait_ns);
            assert_eq!(tg_hedger_should_hedge(h, &mut t, &mut d), TG_OK);
            assert_eq!(d.kind, TG_DECISION_HEDGE);
            assert_eq!(tg_hedger_on_success(h, &t, 1, null_mut()), TG_OK);
            assert_eq!(tg_hedger_on_success(h, &t, 256, null_mut()), TG_ERR_VALUE);
            // A ticket moved to other storage names the same hedger; a changed owner not.
            t.opaque[1] ^= 8;
            assert_eq!(tg_hedger_on_error(h, &mut t, 0), TG_ERR_MISMATCH);
            t.opaque[1] ^= 8;
            assert_eq!(tg_hedger_on_error(h, &mut t, 1), TG_OK);
            assert_eq!(tg_hedger_stats(h, &mut stats), TG_OK);
            assert_eq!((stats.requests, stats.hedges, stats.hedge_wins), (5, 1, 1));
            assert_eq!(stats.has_delay, 1);
            assert_eq!(tg_hedger_delay(h, &mut latency), TG_OK);
            assert_eq!(latency, stats.delay_ns);
        }
    }

    #[test]
    fn config_defaults_round_trip() {
        let c = tg_hedge_config::defaults();
        assert_eq!(c.to_config().unwrap(), HedgeConfig::new());
        let mut two = c;
        two.percentile_count = 2;
        two.percentiles = [0.5, 0.99];
        assert_eq!(two.to_config().unwrap().max_hedges(), 2);
    }
}
