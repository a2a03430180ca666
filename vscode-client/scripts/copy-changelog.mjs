// vsce runs this before packaging (the `vscode:prepublish` script): the .vsix carries the
// repository's CHANGELOG.md, the one changelog (the extension ships the server, so the
// server's changes are the extension's). The copy is ignored by git.
import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const client = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
copyFileSync(path.join(client, '..', 'CHANGELOG.md'), path.join(client, 'CHANGELOG.md'));
