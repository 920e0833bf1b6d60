// The tests' one Node driver (tests/node_driver.py runs it; the benchmarks through the tests'
// harnesses): a command of a module of this folder on the JSON read from stdin, its answer
// written to stdout as JSON.
//
//   node tests/js/driver.mjs MODULE.COMMAND [ARG...] < INPUT.json
//
// MODULE is the module MODULE.mjs of this folder and COMMAND one of its exports, called as
// command(input, ...args): input is stdin's JSON (null when stdin is empty), args are
// strings. Each module's header lists its commands: states (a lab's state, readout, alt text,
// numbers and figure; the benchmarks' timing), twin (the twin contract), rng, block,
// positional, pretrained, minilm, decoder, llama, bundle (the built bundles and the
// classic scripts), theme.
import {readFileSync} from "node:fs";

const [name = "", ...args] = process.argv.slice(2);
const [file, command] = name.split(".");
if (!/^[a-z_]+$/.test(file ?? "") || !command) {
  throw new Error(`usage: driver.mjs MODULE.COMMAND [ARG...] < INPUT.json: got ${JSON.stringify(name)}`);
}
const commands = await import(new URL(`./${file}.mjs`, import.meta.url).href);
if (typeof commands[command] !== "function") {
  throw new Error(`tests/js/${file}.mjs has no command ${command}: ${Object.keys(commands).join(", ")}`);
}
const text = readFileSync(0, "utf8");
const answer = await commands[command](text.trim() ? JSON.parse(text) : null, ...args);
// all of it before the exit, which ends what would keep Node running (a MessageChannel's ports)
process.stdout.write(JSON.stringify(answer), () => process.exit(0));
