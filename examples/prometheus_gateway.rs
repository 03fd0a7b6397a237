//! A gateway's hedger window served to Prometheus as a native histogram, and the merged
//! sketch of several such gateways, for `.ci/prometheus.sh` to check Prometheus against.
//!
//! ```text
//! cargo run --features std --example prometheus_gateway -- serve --seed 1 --requests 20000 [--port 0]
//! cargo run --features std --example prometheus_gateway -- merge 127.0.0.1:PORT1 127.0.0.1:PORT2
//! ```
//!
//! * `serve`: a hedger whose window holds OpenTelemetry buckets (scale 5, 1.08 %) records
//!   the latencies of `--requests` requests of workload A (docs/reference.md), drawn
//!   from `--seed`, then stops recording, and serves on 127.0.0.1 (hyper):
//!   `/metrics`, its window as `gateway_latency_nanoseconds` in the exposition the
//!   scrape's `Accept` header asks for (protobuf: a native histogram; otherwise text:
//!   a classic one), and `/otlp`, the same window as an OTLP data point. It prints
//!   `listening on 127.0.0.1:PORT` once it accepts connections. The window's clock is a
//!   `ManualClock` that never moves: the window never rotates, so every scrape sees the
//!   same sketch, and the expected values are exact.
//! * `merge`: fetches each gateway's `/otlp`, merges them into one sketch
//!   (`otlp::decode_into`, exact: same scale), and prints it as JSON: count, sum, the
//!   quantiles 0.5, 0.9 and 0.99 with the edges of the bucket each lies in, and every
//!   bucket as Prometheus numbers them (`(lower, upper]` and count).

use std::convert::Infallible;
use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::header::{ACCEPT, CONTENT_TYPE};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tailguard::hedge::{HedgeConfig, Hedger};
use tailguard::prometheus::{self, Family, Series};
use tailguard::sketch::{presets, IndexMapping, OtelMapping};
use tailguard::{otlp, ManualClock};
use tailguard_support::{workload::a, Rng};

const METRIC: &str = "gateway_latency_nanoseconds";
const HELP: &str = "Latency the gateway's hedger observed (ns), its current window";
const QS: [f64; 3] = [0.5, 0.9, 0.99];

type GatewayHedger = Hedger<
    ManualClock,
    tailguard::budget::RatioBudget,
    OtelMapping,
    { presets::OTEL_LATENCY_BINS },
>;

fn response(status: StatusCode, content_type: &str, body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if let Ok(value) = content_type.parse() {
        response.headers_mut().insert(CONTENT_TYPE, value);
    }
    response
}

/// The handler: `/metrics` in the format asked for, `/otlp`, or 404.
fn handle(hedger: &GatewayHedger, request: &Request<Incoming>) -> Response<Full<Bytes>> {
    let window: presets::OtelLatency = hedger.window().snapshot();
    match request.uri().path() {
        "/metrics" => {
            let accept = request
                .headers()
                .get(ACCEPT)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let series = [Series {
                sketch: &window,
                labels: &[],
            }];
            let families = [Family {
                name: METRIC,
                help: HELP,
                series: &series,
            }];
            match prometheus::scrape(accept, &families) {
                Ok(answer) => response(StatusCode::OK, answer.content_type, answer.body),
                Err(e) => response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "text/plain",
                    e.to_string().into_bytes(),
                ),
            }
        }
        "/otlp" => {
            let times = otlp::Timestamps::default();
            let mut body = vec![0u8; otlp::encoded_len(&window, times)];
            match otlp::encode(&window, times, &mut body) {
                Ok(_) => response(StatusCode::OK, "application/x-protobuf", body),
                Err(e) => response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "text/plain",
                    e.to_string().into_bytes(),
                ),
            }
        }
        _ => response(StatusCode::NOT_FOUND, "text/plain", b"not found\n".to_vec()),
    }
}

async fn serve(seed: u64, requests: usize, port: u16) -> Result<(), String> {
    let hedger: GatewayHedger = Hedger::with_layout(
        ManualClock::new(),
        HedgeConfig::new(),
        presets::OTEL_LATENCY_LAYOUT,
    )
    .map_err(|e| e.to_string())?;
    let mut rng = Rng::new(seed);
    for _ in 0..requests {
        hedger.record(Duration::from_nanos(a::latency_ns(&mut rng) as u64));
    }
    let hedger = Arc::new(hedger);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    println!("listening on {addr}");
    let _ = std::io::stdout().flush();
    loop {
        let (stream, _) = listener.accept().await.map_err(|e| e.to_string())?;
        let hedger = Arc::clone(&hedger);
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let response = handle(&hedger, &request);
                async move { Ok::<_, Infallible>(response) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// A float as JSON (Rust's shortest round-trip form).
fn json(v: f64) -> String {
    format!("{v:?}")
}

async fn merge(addrs: &[String]) -> Result<(), String> {
    let client: Client<_, Empty<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let mut total = presets::otel_latency();
    for addr in addrs {
        let uri: hyper::Uri = format!("http://{addr}/otlp")
            .parse()
            .map_err(|e| format!("{addr}: {e}"))?;
        let response = client.get(uri).await.map_err(|e| format!("{addr}: {e}"))?;
        if response.status() != StatusCode::OK {
            return Err(format!("{addr}: {}", response.status()));
        }
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("{addr}: {e}"))?
            .to_bytes();
        let report = otlp::decode_into(&body, &mut total).map_err(|e| format!("{addr}: {e}"))?;
        // An empty point adds nothing, and has no min or max to be exact about.
        let inexact = report.added > 0 && !report.exact_stats;
        if inexact || report.below_range + report.above_range + report.saturated > 0 {
            return Err(format!("{addr}: the merge was not exact ({report:?})"));
        }
    }
    let m = *total.mapping();
    let quantiles: Vec<String> = QS
        .iter()
        .map(|&q| match total.quantile(q).ok().flatten() {
            Some(v) => {
                let i = m.index(v);
                // OpenTelemetry's bin i is (b^i, b^(i+1)]: Prometheus's bucket i + 1.
                format!(
                    "{{\"q\": {q}, \"value\": {}, \"lower\": {}, \"upper\": {}}}",
                    json(v),
                    json(m.lower_bound(i)),
                    json(m.lower_bound(i + 1))
                )
            }
            // No values: no quantile (JSON has no NaN).
            None => format!("{{\"q\": {q}, \"value\": null, \"lower\": null, \"upper\": null}}"),
        })
        .collect();
    let buckets: Vec<String> = total
        .bins()
        .map(|bin| {
            format!(
                "[{}, {}, {}]",
                json(m.lower_bound(bin.index)),
                json(m.lower_bound(bin.index + 1)),
                bin.count
            )
        })
        .collect();
    println!(
        "{{\"count\": {}, \"sum\": {}, \"zero_count\": {}, \"scale\": {}, \"relative_accuracy\": {},\n \"quantiles\": [{}],\n \"buckets\": [{}]}}",
        total.count(),
        json(total.sum()),
        total.zero_count(),
        m.scale(),
        json(total.relative_accuracy()),
        quantiles.join(", "),
        buckets.join(", ")
    );
    Ok(())
}

fn usage() -> ExitCode {
    eprintln!("usage: prometheus_gateway serve --seed N --requests N [--port N]\n       prometheus_gateway merge ADDR...");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start tokio: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match args.first().map(String::as_str) {
        Some("serve") => {
            let (mut seed, mut requests, mut port) = (1u64, 20_000usize, 0u16);
            let mut rest = args[1..].iter();
            while let Some(flag) = rest.next() {
                let value = rest.next().map(String::as_str).unwrap_or("");
                let ok = match flag.as_str() {
                    "--seed" => value.parse().map(|v| seed = v).is_ok(),
                    "--requests" => value.parse().map(|v| requests = v).is_ok(),
                    "--port" => value.parse().map(|v| port = v).is_ok(),
                    _ => false,
                };
                if !ok {
                    return usage();
                }
            }
            runtime.block_on(serve(seed, requests, port))
        }
        Some("merge") if args.len() > 1 => runtime.block_on(merge(&args[1..])),
        _ => return usage(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("prometheus_gateway: {e}");
            ExitCode::FAILURE
        }
    }
}
