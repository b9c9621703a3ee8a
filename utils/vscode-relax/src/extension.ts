// The VS Code client of the relax language server: starts `relax-lsp` over stdio for
// .rlx documents and restarts it when its settings change or on "Relax: Restart Language
// Server". Highlighting and editing rules come from the grammar and the language
// configuration declared in package.json, and work without the server.

import * as path from "path";
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from "vscode-languageclient/node";

let client: LanguageClient | undefined;

/** The server executable from `relax.serverPath`: a bare name is looked up on PATH; a
 * relative path is taken from the first workspace folder. */
function serverCommand(): string {
  const configured = vscode.workspace.getConfiguration("relax").get<string>("serverPath")?.trim() || "relax-lsp";
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (path.isAbsolute(configured) || !configured.includes("/") || folder === undefined) {
    return configured;
  }
  return path.join(folder.uri.fsPath, configured);
}

async function start(): Promise<void> {
  const command = serverCommand();
  const args = vscode.workspace.getConfiguration("relax").get<string[]>("serverArgs") ?? [];
  const serverOptions: ServerOptions = { command, args, transport: TransportKind.stdio };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "relax" },
      { scheme: "untitled", language: "relax" },
    ],
  };
  client = new LanguageClient("relax", "Relax Language Server", serverOptions, clientOptions);
  try {
    await client.start();
  } catch (e) {
    client = undefined;
    void vscode.window.showErrorMessage(
      `Relax: could not start the language server \`${command}\` (${e}). ` +
        "Build it with `cargo build --release -p relax-lsp-bin` and set `relax.serverPath`.",
    );
  }
}

async function stop(): Promise<void> {
  const c = client;
  client = undefined;
  if (c !== undefined) {
    await c.stop();
  }
}

async function restart(): Promise<void> {
  await stop();
  await start();
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.commands.registerCommand("relax.restartServer", restart),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("relax.serverPath") || e.affectsConfiguration("relax.serverArgs")) {
        void restart();
      }
    }),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  await stop();
}
