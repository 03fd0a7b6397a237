#!/usr/bin/env bash
# The C firmware (ffi/firmware/): tailguard through its C ABI (ffi/include/tailguard.h),
# compiled with arm-none-eabi-gcc against the ffi crate's static library for the
# Cortex-M0 (thumbv6m-none-eabi, QEMU's micro:bit, 16 KiB of RAM) and the Cortex-M4F
# (thumbv7em-none-eabihf, QEMU's MPS2 AN386), and run under QEMU. It runs the Rust
# firmware's sketch checks and must get the host's answers to the bit (firmware/src/
# expected.rs, turned into a C header here, at build time), encodes DataDog's protobuf
# and must write the host's bytes (ffi/firmware/ddsketch-int-coarse.hex, checked current
# by tests/ffi_firmware_fixture.rs first), and hedges a stalling sensor from a super-loop
# on a SysTick clock by the embassy firmware's criteria. It exits through semihosting,
# non-zero on a failed check, which fails this script. Each image also prints the stack
# its set-up calls take. Last, the images' flash, RAM and peak stack.
#
#   bash .ci/ffi-firmware.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

# The C toolchain and newlib (its libc's memcpy and memset; nano.specs), QEMU, the targets.
if ! command -v arm-none-eabi-gcc >/dev/null ||
  [ -z "$(arm-none-eabi-gcc -mcpu=cortex-m0 -mthumb --specs=nano.specs -print-file-name=libc_nano.a | grep /)" ]; then
  apt-get update && apt-get install -y gcc-arm-none-eabi libnewlib-arm-none-eabi
fi
if ! command -v qemu-system-arm >/dev/null; then
  apt-get update && apt-get install -y qemu-system-arm
fi
installed="$(rustup target list --installed)"
for target in thumbv6m-none-eabi thumbv7em-none-eabihf; do
  grep -qx "$target" <<<"$installed" || rustup target add "$target"
done

ffi="$root/ffi"
src="$ffi/firmware"
out="$ffi/target/firmware"
mkdir -p "$out"

# DataDog's bytes on the host (the committed fixture is current), then the header of the
# host's answers, generated and not committed, so it cannot drift from expected.rs.
cargo test -q --locked --test ffi_firmware_fixture
python3 "$src/gen-expected.py" "$root/firmware/src/expected.rs" "$src/ddsketch-int-coarse.hex" \
  "$out/expected.h"

# image, target, QEMU cpu, QEMU machine, linker script, icount shift, core clock (Hz),
# the presets its C code uses (the staticlib links those alone: the others' code and
# constant images stay out of flash), gcc's flags for the core. The shift: one instruction per 2^S ns of virtual time, which
# SysTick counts, so the run is deterministic and the core runs near the board's clock (as
# firmware-embassy.sh). The core clock is SysTick's, as QEMU models the board. The third
# image is the micro:bit's code (thumbv6m, soft float, the microcontroller hedger) on the
# MPS2 AN385's Cortex-M3, which runs ARMv6-M code, with 4 MiB of RAM: when the micro:bit
# fails and it passes, the micro:bit ran out of RAM.
v6m_presets=preset-int,preset-int-coarse,preset-mcu
v7em_presets=preset-cubic,preset-int,preset-int-coarse,preset-log,preset-mcu
boards=(
  "microbit thumbv6m-none-eabi cortex-m0 microbit microbit 6 16000000 $v6m_presets -mcpu=cortex-m0 -mfloat-abi=soft"
  "mps2-an386 thumbv7em-none-eabihf cortex-m4 mps2-an386 mps2-an386 5 25000000 $v7em_presets -mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16"
  "thumbv6m-on-an385 thumbv6m-none-eabi cortex-m3 mps2-an385 mps2-an386 6 25000000 $v6m_presets -mcpu=cortex-m0 -mfloat-abi=soft"
)

cflags=(-mthumb -Os -g -std=c11 -Wall -Wextra -Wconversion -Werror -ffunction-sections
  -fdata-sections -ffreestanding)
for board in "${boards[@]}"; do
  read -r image target cpu machine ld shift hz presets mflags <<<"$board"
  # The thumbv6m core has no compare-and-swap, and the thumbv7em none of 64 bits: the C
  # program is single-core and privileged, so the ffi crate's `single-core` feature makes
  # those atomics disable interrupts (as the Rust firmware's critical sections do), never
  # spin on a lock an interrupt could hold. The same feature as .ci/ffi.sh's thumb builds:
  # the dependencies built there are reused here.
  cargo build -q --release --locked --lib --manifest-path "$ffi/Cargo.toml" --target "$target" \
    --no-default-features --features "single-core,$presets"
  # shellcheck disable=SC2086 # mflags is a list of flags
  arm-none-eabi-gcc $mflags "${cflags[@]}" -DCORE_HZ="$hz" \
    -I "$ffi/include" -I "$out" -I "$src" "$src"/*.c \
    -nostartfiles --specs=nano.specs -L "$src" -T "$src/$ld.ld" \
    -Wl,--gc-sections -Wl,-z,noexecstack -Wl,-Map="$out/$image.map" \
    "$ffi/target/$target/release/libtailguard_ffi.a" -lc -lgcc \
    -o "$out/$image.elf"
done

# Both boards run, and the sizes print, before a failure fails the script.
failed=()
for board in "${boards[@]}"; do
  read -r image target cpu machine ld shift hz presets mflags <<<"$board"
  elf="$out/$image.elf"
  log="$out/$image.log"
  echo "--- C firmware $image on $machine ($cpu, $target)"
  status=0
  timeout 120 qemu-system-arm -cpu "$cpu" -machine "$machine" -nographic \
    -icount "shift=$shift,align=off,sleep=off" \
    -semihosting-config enable=on,target=native -kernel "$elf" | tee "$log" || status=$?
  if [ "$status" -ne 0 ]; then
    failed+=("$image: exited $status")
  elif ! grep -Eq '^[0-9]+ passed, 0 failed$' "$log"; then
    failed+=("$image: no '... passed, 0 failed' line")
  elif ! grep -qx "ddsketch/int-coarse $(cat "$src/ddsketch-int-coarse.hex")" "$log"; then
    # The bytes it printed are the host's (it compared them itself too).
    failed+=("$image: DataDog's bytes are not the host's")
  fi
done

# Flash = .text + .data (its initial values live in flash), RAM = .data + .bss (the stack
# is the rest of RAM). Berkeley's text includes .rodata and the vector table. The peak
# stack is what the image measured of its whole run (its "stack: peak" line).
echo "--- flash, static RAM and peak stack of the C images (arm-none-eabi-size, the run's log)"
for board in "${boards[@]}"; do
  read -r image target cpu machine ld shift hz presets mflags <<<"$board"
  peak="$(sed -n 's/^stack: peak \([0-9]*\) B of \([0-9]*\) B.*/\1 B of \2 B/p' "$out/$image.log")"
  arm-none-eabi-size -B "$out/$image.elf" | awk -v m="$image ($cpu, $target)" -v peak="${peak:-unknown}" \
    'NR == 2 { printf "%s: text %d, data %d, bss %d: flash %d, static RAM %d, peak stack %s\n", m, $1, $2, $3, $1 + $2, $2 + $3, peak }'
done

if [ "${#failed[@]}" -ne 0 ]; then
  printf 'the C firmware failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
