// A smoke test of relax-lsp with the JSON-RPC client VS Code uses (vscode-jsonrpc): spawn
// the server, open a file with an error, fix it, hover, go to definition, format, shut
// down. Usage: node scripts/smoke.js [path/to/relax-lsp] (default: ../../target/debug/relax-lsp).

const assert = require("assert");
const path = require("path");
const { spawn } = require("child_process");
const rpc = require("vscode-jsonrpc/node");

const server = process.argv[2] || path.join(__dirname, "../../../target/debug/relax-lsp");
const uri = "file:///smoke/example.rlx";
const broken = [
  "@I.ir_module",
  "class Module:",
  "    @R.function",
  '    def main(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):',
  "        y = R.multiply(x, w)",
  "        return y",
  "",
].join("\n");
const fixed = broken.replace("R.multiply(x, w)", "R.multiply(x, x)");

async function main() {
  const child = spawn(server, ["--stdio"], { stdio: ["pipe", "pipe", "inherit"] });
  const conn = rpc.createMessageConnection(
    new rpc.StreamMessageReader(child.stdout),
    new rpc.StreamMessageWriter(child.stdin),
  );
  const published = [];
  let wake = () => {};
  conn.onNotification("textDocument/publishDiagnostics", (p) => {
    published.push(p);
    wake();
  });
  const nextDiagnostics = () =>
    new Promise((resolve) => {
      wake = () => resolve(published.shift());
      if (published.length > 0) wake();
    });
  conn.listen();

  const init = await conn.sendRequest("initialize", { processId: process.pid, rootUri: null, capabilities: {} });
  assert.strictEqual(init.capabilities.hoverProvider, true);
  await conn.sendNotification("initialized", {});

  await conn.sendNotification("textDocument/didOpen", {
    textDocument: { uri, languageId: "relax", version: 1, text: broken },
  });
  const d1 = await nextDiagnostics();
  assert.strictEqual(d1.diagnostics.length, 1);
  assert.strictEqual(d1.diagnostics[0].message, "undefined variable `w`");
  assert.deepStrictEqual(d1.diagnostics[0].range.start, { line: 4, character: 26 });

  await conn.sendNotification("textDocument/didChange", {
    textDocument: { uri, version: 2 },
    contentChanges: [{ text: fixed }],
  });
  assert.strictEqual((await nextDiagnostics()).diagnostics.length, 0);

  const pos = (line, character) => ({ textDocument: { uri }, position: { line, character } });
  const hover = await conn.sendRequest("textDocument/hover", pos(5, 15));
  assert.match(hover.contents.value, /y: R\.Tensor\(\(n, 4\), dtype="float32"\)/);
  const call = await conn.sendRequest("textDocument/hover", pos(4, 15));
  assert.match(call.contents.value, /R\.multiply\(x, x\) -> R\.Tensor/);
  const def = await conn.sendRequest("textDocument/definition", pos(5, 15));
  assert.deepStrictEqual(def.range, { start: { line: 4, character: 8 }, end: { line: 4, character: 9 } });
  // The quoted `"n"` of the return type is defined by the one of the parameter.
  const sig = broken.split("\n")[3];
  const sym = await conn.sendRequest("textDocument/definition", pos(3, sig.lastIndexOf('"n"') + 1));
  assert.deepStrictEqual(sym.range.start, { line: 3, character: sig.indexOf('"n"') + 1 });
  const edits = await conn.sendRequest("textDocument/formatting", {
    textDocument: { uri },
    options: { tabSize: 4, insertSpaces: true },
  });
  assert.strictEqual(edits.length, 1);
  assert.match(edits[0].newText, /^# from tvm\.script import ir as I\n/);

  await conn.sendRequest("shutdown");
  await conn.sendNotification("exit");
  const code = await new Promise((resolve) => child.on("exit", resolve));
  assert.strictEqual(code, 0);
  conn.dispose();
  console.log("relax-lsp smoke test passed");
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
