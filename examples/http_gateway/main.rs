//! Hedging over real sockets: a tokio + hyper client hedged by tailguard's tower layer,
//! against a local hyper backend with the latency model of docs/reference.md, workload A.
//!
//! ```text
//! cargo run --release --features tower --example http_gateway            # table
//! cargo run --release --features tower --example http_gateway -- --csv   # config,p50,p90,p95,p99,p999,overhead_pct
//! cargo run --release --features tower --example http_gateway -- --ttft  # streaming: headers vs first byte
//! ```
//!
//! Options: `--requests N` (default 50,000; 10,000 with `--ttft`), `--concurrency N`
//! (default 20, at most 10,000: each client is a task with pooled connections).
//!
//! * The backend ([`loopback`], in the support crate) listens on 127.0.0.1; every attempt
//!   draws its own latency; a handler whose client goes away (a cancelled loser) is
//!   dropped and stops early.
//! * `concurrency` clients send GET requests back to back through a pooled hyper client,
//!   hedged (or not) by [`HedgeLayer`]. A request's latency is the time to its first body
//!   byte, what the caller waits for; percentiles are `sorted[int((n - 1) * p)]`;
//!   overhead is extra backend attempts per request, counted by the backend.
//! * Rows: no hedging; static delays of 10 and 50 ms (a hedger whose delay is clamped to
//!   one value, with a budget that never refuses); tailguard's defaults (p90 of the last
//!   30-60 s, 10 % ratio budget).
//! * `--ttft` (docs/reference.md, workload B, a streaming endpoint: headers at once, the
//!   first byte after the time to first token, 20 % of attempts slow): tailguard at p75
//!   with a 30 % budget (with 20 % slow attempts, the p90 lies among them), once on the
//!   response headers and once behind [`FirstByteLayer`], and there once more with up to
//!   two backups. On headers the hedger sees sub-millisecond answers and the race ends at
//!   the headers, so the slow first tokens are never hedged.

use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response};
use http_body::Body;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tailguard::clock::StdClock;
use tailguard::hedge::{ColdStart, HedgeConfig, Hedger, Stats};
use tailguard::tower::{FirstByteLayer, HedgeLayer};
use tailguard_support::loopback::{self, Model};
use tower::{Layer, Service, ServiceBuilder, ServiceExt};

const SEED: u64 = 0x7461_696c_6775_6172; // "tailguar"
const QS: [f64; 5] = [0.5, 0.9, 0.95, 0.99, 0.999];

struct Options {
    csv: bool,
    ttft: bool,
    requests: usize,
    concurrency: usize,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        csv: false,
        ttft: false,
        requests: 0,
        concurrency: 20,
    };
    let mut args = std::env::args().skip(1);
    let number = |flag: &str, value: Option<String>| -> Result<usize, String> {
        value
            .and_then(|v| v.parse().ok())
            .filter(|&n| n > 0)
            .ok_or(format!("{flag} needs a positive integer"))
    };
    // The client pool holds 4 connections per client: a count past this would overflow
    // it (and spawn as many tasks).
    const MAX_CONCURRENCY: usize = 10_000;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--csv" => options.csv = true,
            "--ttft" => options.ttft = true,
            "--requests" => options.requests = number("--requests", args.next())?,
            "--concurrency" => {
                options.concurrency = number("--concurrency", args.next())?;
                if options.concurrency > MAX_CONCURRENCY {
                    return Err(format!("--concurrency is at most {MAX_CONCURRENCY}"));
                }
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if options.requests == 0 {
        options.requests = if options.ttft { 10_000 } else { 50_000 };
    }
    Ok(options)
}

/// How a row hedges.
enum Hedging {
    Off,
    /// Race and measure at the response headers.
    OnHeaders(HedgeConfig),
    /// Race and measure at the first body byte.
    OnFirstByte(HedgeConfig),
}

struct Row {
    name: &'static str,
    percentiles_ms: [f64; 5],
    overhead_pct: f64,
    failures: u64,
    stats: Option<Stats>,
    cancelled: u64,
}

/// A hedger that always waits `d`, with a budget that never refuses (each request
/// deposits a whole token, and spends at most one).
fn fixed_delay(d: Duration) -> HedgeConfig {
    HedgeConfig::new()
        .with_min_delay(d)
        .with_max_delay(d)
        .with_cold_start(ColdStart::Delay(d))
        .with_budget_ratio(1.0)
}

type HttpClient = Client<HttpConnector, Empty<Bytes>>;

fn http_client(pool: usize) -> HttpClient {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(pool)
        .build(connector)
}

/// Sends `n` GET requests from `concurrency` clients back to back; returns each
/// request's time to first byte in nanoseconds (`None` for a failed request).
async fn load<S, B>(service: S, uri: http::Uri, n: usize, concurrency: usize) -> Vec<Option<u64>>
where
    S: Service<Request<Empty<Bytes>>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: std::fmt::Display,
    B: Body + Send + Unpin,
    B::Data: Send,
{
    let next = Arc::new(AtomicUsize::new(0));
    let mut clients = Vec::new();
    for _ in 0..concurrency {
        let (mut service, next, uri) = (service.clone(), Arc::clone(&next), uri.clone());
        clients.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while next.fetch_add(1, Relaxed) < n {
                let request = Request::get(uri.clone()).body(Empty::new());
                let start = Instant::now();
                let latency = async {
                    let response = service.ready().await.ok()?.call(request.ok()?).await.ok()?;
                    let mut body = response.into_body();
                    body.frame().await?.ok()?;
                    let latency = start.elapsed();
                    while let Some(frame) = body.frame().await {
                        frame.ok()?;
                    }
                    Some(latency.as_nanos() as u64)
                }
                .await;
                latencies.push(latency);
            }
            latencies
        }));
    }
    let mut all = Vec::with_capacity(n);
    for client in clients {
        all.extend(client.await.unwrap_or_default());
    }
    all
}

async fn run_row(name: &'static str, model: Model, hedging: Hedging, options: &Options) -> Row {
    let (addr, backend) = match loopback::start(model, SEED).await {
        Ok(started) => started,
        Err(e) => {
            eprintln!("cannot start the backend: {e}");
            std::process::exit(1);
        }
    };
    let uri: http::Uri = format!("http://{addr}/").parse().unwrap_or_default();
    let client = http_client(4 * options.concurrency);
    let sleep = tokio::time::sleep;
    let (n, c) = (options.requests, options.concurrency);
    let hedger = match hedging {
        Hedging::Off => None,
        Hedging::OnHeaders(config) | Hedging::OnFirstByte(config) => {
            match Hedger::new(StdClock::new(), config) {
                Ok(hedger) => Some(Arc::new(hedger)),
                Err(e) => {
                    eprintln!("invalid configuration for {name}: {e}");
                    std::process::exit(2);
                }
            }
        }
    };
    let latencies = match (&hedging, &hedger) {
        (Hedging::OnFirstByte(_), Some(hedger)) => {
            let service = ServiceBuilder::new()
                .layer(HedgeLayer::new(Arc::clone(hedger), sleep))
                .layer(FirstByteLayer)
                .service(client);
            load(service, uri, n, c).await
        }
        (_, Some(hedger)) => {
            let layer = HedgeLayer::new(Arc::clone(hedger), sleep);
            load(layer.layer(client), uri, n, c).await
        }
        (_, None) => load(client, uri, n, c).await,
    };
    // Let cancelled attempts still in transit reach the backend and end.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut ok: Vec<u64> = latencies.iter().flatten().copied().collect();
    ok.sort_unstable();
    let percentiles_ms = QS.map(|q| {
        let i = ((ok.len().saturating_sub(1)) as f64 * q) as usize;
        ok.get(i).map_or(f64::NAN, |&ns| ns as f64 / 1e6)
    });
    let extra = backend.attempts().saturating_sub(n as u64);
    Row {
        name,
        percentiles_ms,
        overhead_pct: 100.0 * extra as f64 / n as f64,
        failures: (latencies.len() - ok.len()) as u64,
        stats: hedger.map(|h| h.stats()),
        cancelled: backend.cancelled(),
    }
}

fn print_table(title: &str, rows: &[Row]) {
    println!("\n### {title}\n");
    println!("| config | p50 | p90 | p95 | p99 | p99.9 | overhead | hedges (won) | losers stopped early |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for row in rows {
        let [p50, p90, p95, p99, p999] = row.percentiles_ms;
        let hedges = row.stats.map_or("-".to_owned(), |s| {
            format!("{} ({})", s.hedges, s.hedge_wins)
        });
        println!(
            "| {} | {p50:.1} | {p90:.1} | {p95:.1} | {p99:.1} | {p999:.1} | {:.1} % | {hedges} | {} |",
            row.name, row.overhead_pct, row.cancelled
        );
    }
    println!("\n(ms; time to first body byte)");
    for row in rows.iter().filter(|r| r.failures > 0) {
        println!("{}: {} requests failed", row.name, row.failures);
    }
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("http_gateway: {e}\nusage: http_gateway [--csv] [--ttft] [--requests N] [--concurrency N]");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start tokio: {e}");
            return ExitCode::FAILURE;
        }
    };
    let ms = Duration::from_millis;
    let (title, model, configs): (&str, Model, Vec<(&'static str, Hedging)>) = if options.ttft {
        let config = HedgeConfig::new()
            .with_percentile(0.75)
            .with_budget_ratio(0.3);
        (
            "Streaming (docs/reference.md, workload B): calibrated on headers vs first byte",
            Model::Ttft,
            vec![
                ("no hedging", Hedging::Off),
                ("tailguard p75, on headers", Hedging::OnHeaders(config)),
                ("tailguard p75, on first byte", Hedging::OnFirstByte(config)),
                (
                    "tailguard p75, on first byte, 2 backups",
                    Hedging::OnFirstByte(config.with_max_hedges(2)),
                ),
            ],
        )
    } else {
        (
            "Loopback HTTP (docs/reference.md, workload A)",
            Model::Lognormal,
            vec![
                ("no hedging", Hedging::Off),
                ("static 10 ms", Hedging::OnHeaders(fixed_delay(ms(10)))),
                ("static 50 ms", Hedging::OnHeaders(fixed_delay(ms(50)))),
                ("tailguard default", Hedging::OnHeaders(HedgeConfig::new())),
            ],
        )
    };
    let started = Instant::now();
    let mut rows = Vec::new();
    for (name, hedging) in configs {
        if !options.csv {
            eprintln!(
                "running {name} ({} requests, {} clients)",
                options.requests, options.concurrency
            );
        }
        rows.push(runtime.block_on(run_row(name, model, hedging, &options)));
    }
    if options.csv {
        println!("config,p50,p90,p95,p99,p999,overhead_pct");
        for row in &rows {
            let [p50, p90, p95, p99, p999] = row.percentiles_ms;
            println!(
                "{},{p50:.2},{p90:.2},{p95:.2},{p99:.2},{p999:.2},{:.2}",
                row.name, row.overhead_pct
            );
        }
        return ExitCode::SUCCESS;
    }
    print_table(title, &rows);
    for row in &rows {
        if let Some(stats) = row.stats {
            println!("{}: {stats}", row.name);
        }
    }
    if !options.ttft {
        let (off, tg) = (&rows[0], &rows[3]);
        let p50_change = (tg.percentiles_ms[0] / off.percentiles_ms[0] - 1.0) * 100.0;
        let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
        println!("\nTargets (tailguard default):");
        println!(
            "- p99 {:.1} ms <= 18 ms: {}",
            tg.percentiles_ms[3],
            verdict(tg.percentiles_ms[3] <= 18.0)
        );
        println!(
            "- overhead {:.1} % <= 9 %: {}",
            tg.overhead_pct,
            verdict(tg.overhead_pct <= 9.0)
        );
        println!(
            "- p50 {:+.1} % against no hedging, within 5 %: {}",
            p50_change,
            verdict(p50_change.abs() <= 5.0)
        );
    }
    println!(
        "\n{} requests per row in {:.1} s",
        options.requests,
        started.elapsed().as_secs_f64()
    );
    ExitCode::SUCCESS
}
