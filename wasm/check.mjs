// Runs the wasm module (wasm/src/lib.rs) under node: its clock is performance.now(),
// imported as env.now_ms. Records latencies of 1..100 ms and checks the hedge delay is
// their p90 (within the sketch's accuracy), garbage refused. Usage: node wasm/check.mjs <module.wasm>
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

const bytes = readFileSync(process.argv[2]);
const { instance } = await WebAssembly.instantiate(bytes, {
  env: { now_ms: () => performance.now() },
});
const { record_ms, hedge_delay_ms } = instance.exports;

if (hedge_delay_ms() !== -1) throw new Error("a cold hedger gave a delay");
// Garbage is refused: NaN (undefined, a string), negatives.
for (const bad of [NaN, undefined, "fast", -50, -0.001]) {
  if (record_ms(bad) !== 0) throw new Error(`record_ms(${bad}) was not refused`);
}
for (let i = 1; i <= 100; i++) {
  if (record_ms(i) !== 1) throw new Error(`record_ms(${i}) was refused`);
}
const delay = hedge_delay_ms();
if (!(Math.abs(delay - 90) <= 0.02 * 90)) throw new Error(`delay ${delay} ms, want about 90`);
console.log(`wasm32 module: hedge delay ${delay.toFixed(2)} ms after 100 samples of 1..100 ms`);
