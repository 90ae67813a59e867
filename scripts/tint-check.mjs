#!/usr/bin/env node
// Validates WGSL files with Tint, the WGSL compiler of Dawn (Chrome's WebGPU), through the npm
// package `webgpu` (Dawn's node binding; its prebuilt dawn.node ships inside the package).
// Dawn's null backend needs no GPU: createShaderModule runs Tint's whole front end (parsing,
// resolution, uniformity analysis, f16 and subgroup rules) and createComputePipeline Dawn's
// pipeline validation (WebGPU's default limits on workgroup size and workgroup memory, the
// bindings of each entry point).
//
//   node scripts/tint-check.mjs [--webgpu DIR] PATH...
//
// PATH is a .wgsl file or a folder of them (`cargo convbench kernels --emit DIR` writes every
// final source convbench can produce). DIR is where `webgpu` was installed with
// `npm install --prefix DIR webgpu@VERSION` (.ci/run does it in its cache); without it the
// package is imported from node's usual places. Prints `file:line:column: error: message` for
// every message of Tint and every pipeline error, then how many files Tint accepted; exits 1 when
// it rejects one, 2 when it cannot run.
//
// What is checked, and what is not:
// - Each file is compiled as it is, on a device with `shader-f16` and `subgroups` (so
//   `enable f16;` and `enable subgroups;` are accepted where the adapter has the features, as
//   Dawn's null adapter does) and WebGPU's default limits, which every adapter offers.
// - Each `@compute` entry point (found by a regular expression over the text) gets a pipeline
//   with `layout: 'auto'` and no override constants: convbench passes none, so an `override`
//   without a default fails here as it would under wgpu. convbench's own shaders use `const`
//   declarations, specialised in the text (`kernels --emit` writes each specialisation), so
//   module validation alone already sees the final sizes.
// - Nothing runs: Dawn cannot open lavapipe on Debian 12 (it lacks a Vulkan feature Dawn
//   requires), and the null backend only validates.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

function usage(message) {
  console.error(`tint-check: ${message}\nusage: node scripts/tint-check.mjs [--webgpu DIR] PATH...`);
  process.exit(2);
}

const args = process.argv.slice(2);
let webgpuDir = null;
const paths = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--webgpu') {
    webgpuDir = args[++i] ?? usage('--webgpu needs the folder the package was installed in');
  } else if (args[i].startsWith('-')) {
    usage(`unknown option ${args[i]}`);
  } else {
    paths.push(args[i]);
  }
}
if (paths.length === 0) usage('name at least one .wgsl file or folder');

const files = [];
for (const path of paths) {
  let stat;
  try {
    stat = statSync(path);
  } catch (error) {
    usage(`cannot read ${path}: ${error.message}`);
  }
  if (stat.isDirectory()) {
    const found = readdirSync(path).filter((name) => name.endsWith('.wgsl')).sort();
    if (found.length === 0) usage(`${path} holds no .wgsl file`);
    files.push(...found.map((name) => join(path, name)));
  } else {
    files.push(path);
  }
}

let webgpu;
try {
  const entry = webgpuDir
    ? pathToFileURL(resolve(webgpuDir, 'node_modules', 'webgpu', 'index.js')).href
    : 'webgpu';
  webgpu = await import(entry);
} catch (error) {
  console.error(
    `tint-check: cannot load the npm package webgpu (${error.message}); install it with ` +
      '`npm install --prefix DIR webgpu@0.6.2` and pass --webgpu DIR',
  );
  process.exit(2);
}
Object.assign(globalThis, webgpu.globals);
const gpu = webgpu.create(['backend=null']);
const adapter = await gpu.requestAdapter();
if (!adapter) {
  console.error("tint-check: Dawn's null backend gave no adapter");
  process.exit(2);
}
const requiredFeatures = ['shader-f16', 'subgroups'].filter((f) => adapter.features.has(f));
const device = await adapter.requestDevice({ requiredFeatures });

// Dawn also reports a module's errors as a validation error; the compilation messages carry
// the line and column, so the scope's error is only printed when there are none.
async function scoped(make) {
  device.pushErrorScope('validation');
  const made = make();
  const error = await device.popErrorScope();
  return { made, error };
}

const entryPoints = (text) =>
  [...text.matchAll(/@compute\b[^{;]*?\bfn\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(/g)].map((m) => m[1]);

let rejected = 0;
let pipelines = 0;
for (const file of files) {
  const code = readFileSync(file, 'utf8');
  const { made: module, error } = await scoped(() => device.createShaderModule({ code }));
  const info = await module.getCompilationInfo();
  const messages = info.messages.map((m) => `${file}:${m.lineNum}:${m.linePos}: ${m.type}: ${m.message}`);
  const problems = info.messages.some((m) => m.type === 'error') ? messages : [];
  if (problems.length === 0) messages.forEach((line) => console.log(line));
  if (error && problems.length === 0) problems.push(`${file}: error: ${error.message}`);
  if (problems.length === 0) {
    const entries = entryPoints(code);
    if (entries.length === 0) problems.push(`${file}: error: no @compute entry point found`);
    for (const entryPoint of entries) {
      const { error: pipelineError } = await scoped(() =>
        device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint } }),
      );
      pipelines += 1;
      if (pipelineError) {
        const first = pipelineError.message.trim().split('\n')[0];
        problems.push(`${file}: error: entry point ${entryPoint}: ${first}`);
      }
    }
  }
  if (problems.length > 0) {
    rejected += 1;
    for (const p of problems) console.log(p);
  }
}
const accepted = files.length - rejected;
console.log(
  `tint-check: Tint accepted ${accepted} of ${files.length} WGSL files (${pipelines} compute entry points through pipeline validation)`,
);
device.destroy();
process.exit(rejected > 0 ? 1 : 0);
