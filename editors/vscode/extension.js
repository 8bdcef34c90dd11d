// loopc for VS Code: starts `loopc lsp` for .loop files through
// vscode-languageclient. Plain JavaScript, so there is no build step:
// `npm install` in this folder, then load the folder as an extension
// (or package it with `npx @vscode/vsce package`).
'use strict';

const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration('loopc').get('path') || 'loopc';
  const server = { command, args: ['lsp'], transport: TransportKind.stdio };
  client = new LanguageClient(
    'loopc',
    'loopc',
    { run: server, debug: server },
    { documentSelector: [{ language: 'loop' }] }
  );
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('loopc.path')) {
        vscode.window.showInformationMessage('loopc.path changed: reload the window to use it.');
      }
    })
  );
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
