// The path benchmarks/browser_states.py and browser_training.py run: the tests' one Node
// driver's states.run (tests/js/driver.mjs, tests/js/states.mjs), its arguments unchanged:
//   node tests/web_states_driver.js <lab> [--data FILE] [--time N] ...
// is `node tests/js/driver.mjs states.run <lab> ...`. It goes once the benchmarks call that.
process.argv.splice(2, 0, "states.run");
import("./js/driver.mjs");
