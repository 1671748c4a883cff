// Loads a Chrome JSON trace with the DevTools Performance panel's trace engine
// (@paulirish/trace_engine, pinned in package.json) and fails on anything it reports.
//
//   node check-devtools.mjs TRACE.json [--expect EXPECT.json]
//
// Prints what the engine found: slices per thread (name and depth in its tree),
// flows (the chain of slices each one joins), and the counter samples the engine
// accepted. With --expect, a JSON object such as
//   {"slices": {"<tid>": ["name depth", ...]}, "flows": [["name@tid", ...]],
//    "counters": {"name": samples}}
// must match what was found (slices as a multiset per thread, flows as a set).
// Exit status: 0 clean, 1 the engine reported an error or a warning or the
// expectation failed, 77 the engine is not installed (run `npm ci` here).
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const engineDir = path.join(here, 'node_modules', '@paulirish', 'trace_engine');
if (!fs.existsSync(engineDir)) {
  console.log(`skip: ${engineDir} is missing; run 'npm ci' in ${here}`);
  process.exit(77);
}

const args = process.argv.slice(2);
const tracePath = args[0];
const expectAt = args.indexOf('--expect');
if (!tracePath || (expectAt >= 0 && !args[expectAt + 1])) {
  console.error('usage: node check-devtools.mjs TRACE.json [--expect EXPECT.json]');
  process.exit(2);
}

// The engine reports problems on the console; every one of them fails the check.
const problems = [];
for (const level of ['error', 'warn']) {
  console[level] = (...parts) => problems.push(`console.${level}: ${parts.join(' ')}`);
}

const {polyfillDOMRect} = await import(path.join(engineDir, 'analyze-trace.mjs'));
const Trace = await import(path.join(engineDir, 'models', 'trace', 'trace.js'));
polyfillDOMRect();

const file = JSON.parse(fs.readFileSync(tracePath, 'utf8'));
const events = file.traceEvents;
const model = Trace.TraceModel.Model.createWithAllHandlers();
try {
  await model.parse(events);
} catch (e) {
  problems.push(`parse threw: ${e.stack || e}`);
}
const parsed = model.parsedTrace();
if (!parsed) problems.push('the engine produced no parsed trace');

const found = {slices: {}, flows: [], counters: {}};
if (parsed) {
  const data = parsed.data;
  // Slices: the engine's own tree per thread.
  for (const [, proc] of data.Renderer.processes) {
    for (const [tid, thread] of proc.threads) {
      const list = found.slices[tid] = [];
      const walk = (node, depth) => {
        if (node.entry.ph === 'X') list.push(`${node.entry.name} ${depth}`);
        for (const child of node.children) walk(child, depth + 1);
      };
      for (const root of thread.tree?.roots ?? []) walk(root, 0);
    }
  }
  for (const flow of data.Flows.flows) {
    found.flows.push(flow.map(e => `${e.name}@${e.tid}`));
  }
  // The engine keeps no model of generic counters: count the samples it was given.
  for (const e of events) {
    if (e.ph === 'C') found.counters[e.name] = (found.counters[e.name] ?? 0) + 1;
  }
  // Every event the engine must accept: the fields it reads.
  for (const e of events) {
    for (const key of ['name', 'cat', 'ph', 'ts', 'pid', 'tid']) {
      if (!(key in e)) problems.push(`event without ${key}: ${JSON.stringify(e)}`);
    }
  }
}

const sliceCount = Object.values(found.slices).reduce((n, l) => n + l.length, 0);
console.log(`devtools trace engine: ${sliceCount} slices on ${Object.keys(found.slices).length}` +
            ` threads, ${found.flows.length} flows, ${Object.keys(found.counters).length} counters`);
for (const [tid, list] of Object.entries(found.slices)) {
  const names = {};
  for (const s of list) names[s] = (names[s] ?? 0) + 1;
  console.log(`  tid ${tid}: ` + Object.entries(names).slice(0, 12).map(([k, v]) => `${k} x${v}`).join(', '));
}
for (const flow of found.flows.slice(0, 5)) console.log(`  flow: ${flow.join(' -> ')}`);
for (const [name, n] of Object.entries(found.counters)) console.log(`  counter ${name}: ${n} samples`);

if (expectAt >= 0) {
  const want = JSON.parse(fs.readFileSync(args[expectAt + 1], 'utf8'));
  const sorted = l => [...l].sort().join('\n');
  for (const [tid, list] of Object.entries(want.slices ?? {})) {
    if (sorted(found.slices[tid] ?? []) !== sorted(list)) {
      problems.push(`tid ${tid}: slices ${JSON.stringify(found.slices[tid])}, expected ${JSON.stringify(list)}`);
    }
  }
  if (want.flows) {
    const got = sorted(found.flows.map(f => f.join(' -> ')));
    const exp = sorted(want.flows.map(f => f.join(' -> ')));
    if (got !== exp) problems.push(`flows:\n${got}\nexpected:\n${exp}`);
  }
  for (const [name, n] of Object.entries(want.counters ?? {})) {
    if (found.counters[name] !== n) problems.push(`counter ${name}: ${found.counters[name]} samples, expected ${n}`);
  }
}

if (problems.length) {
  process.stdout.write(problems.map(p => `FAIL ${p}`).join('\n') + '\n');
  process.exit(1);
}
console.log('ok: the DevTools trace engine loaded the trace without errors or warnings');
