// Manual check: feeds every Mermaid snapshot of `loopc graph` to the real
// Mermaid parser (not run by `cargo test`: it needs Node.js and npm packages).
//
//   mkdir -p /tmp/mm && cd /tmp/mm && npm init -y && npm install mermaid@11 jsdom
//   cd /tmp/mm && node "$REPO/tests/graph/mermaid-check.mjs" "$REPO"/tests/snapshots/tests__graph__*_mermaid.snap
//
// (packages are resolved from the current directory). Prints each diagram's
// type, edge count and node labels as Mermaid stores them; exits 1 if any
// file does not parse.
import fs from 'fs';
import { createRequire } from 'module';
const require = createRequire(process.cwd() + '/');
const { JSDOM } = require('jsdom');
const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
globalThis.DOMParser = dom.window.DOMParser;
globalThis.Element = dom.window.Element;
const { default: mermaid } = await import(require.resolve('mermaid').replace(/\.cjs$/, '.mjs'));
mermaid.initialize({ startOnLoad: false });
for (const file of process.argv.slice(2)) {
  let text = fs.readFileSync(file, 'utf8');
  // insta snapshots start with a `---` header block.
  if (text.startsWith('---\n')) text = text.split('\n---\n').slice(1).join('\n---\n');
  try {
    await mermaid.parse(text);
    const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
    const db = diagram.db;
    console.log(`${file}: OK ${diagram.type}, ${db.getEdges().length} edges`);
    for (const v of db.getVertices().values()) console.log(`  ${v.id}: ${JSON.stringify(v.text)}`);
  } catch (e) {
    console.log(`${file}: FAIL ${e.message}`);
    process.exitCode = 1;
  }
}
