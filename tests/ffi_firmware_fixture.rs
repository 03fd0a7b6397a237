//! The C firmware (ffi/firmware/, run under QEMU by .ci/ffi-firmware.sh) checks the bytes
//! `tg_sketch_encode_ddsketch` writes on the microcontroller against
//! ffi/firmware/ddsketch-int-coarse.hex: DataDog's protobuf (the Go/Java convention) of the
//! coarse integer sketch of the Rust firmware's latencies (support/src/firmware.rs), as the
//! library encodes it on the host. This test computes them and fails if the file is not
//! current. To regenerate it: `TAILGUARD_BLESS=1 cargo test --test ffi_firmware_fixture`.
//!
//! A test of this crate rather than of ffi/: the ffi crate's integration tests would link
//! its no_std static library built for the host with the test profile's unwinding panics,
//! which does not build.

use std::fmt::Write as _;
use std::path::Path;

use tailguard::proto::{encode, encoded_len, IndexConvention};
use tailguard::sketch::presets;
use tailguard_support::firmware::{record_latencies, LATENCIES};

/// The host's bytes, as one line of hex.
fn host_hex() -> String {
    let mut s = presets::int_latency_coarse();
    record_latencies(&mut s, 0, LATENCIES);
    let mut buf = vec![0u8; encoded_len(&s, IndexConvention::GoJava)];
    let len = encode(&s, IndexConvention::GoJava, &mut buf).unwrap();
    let mut hex = String::with_capacity(2 * len + 1);
    for b in &buf[..len] {
        write!(hex, "{b:02x}").unwrap();
    }
    hex.push('\n');
    hex
}

#[test]
fn ddsketch_fixture_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("ffi/firmware/ddsketch-int-coarse.hex");
    let want = host_hex();
    if std::env::var_os("TAILGUARD_BLESS").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let got = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        got == want,
        "{} is not current: run `TAILGUARD_BLESS=1 cargo test --test ffi_firmware_fixture`",
        path.display()
    );
}
