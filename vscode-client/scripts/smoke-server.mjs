// Starts the bundled server with the Pythons given (default python3) and checks that it
// answers initialize and shuts down cleanly: proof that bundled/libs imports on them.
//   node scripts/smoke-server.mjs [python ...]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const client = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const serve = path.join(client, 'bundled', 'serve.py');
const pythons = process.argv.slice(2).length ? process.argv.slice(2) : ['python3'];

function frame(message) {
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...message }));
    return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]);
}

function smoke(python) {
    const folder = mkdtempSync(path.join(tmpdir(), 'verify-smoke-'));
    const state = mkdtempSync(path.join(tmpdir(), 'verify-smoke-state-'));
    // A project file makes the server parse TOML, which needs the bundled tomli before 3.11.
    writeFileSync(path.join(folder, '.lsp-verify.toml'), 'command = "true"\n');
    const started = Date.now();
    return new Promise((resolve, reject) => {
        // -S as well as the extension's -I: no site-packages at all, so each import must come
        // from the bundle (the python3 on a CI PATH may be a venv that has every dependency).
        const child = spawn(python, ['-I', '-S', serve], {
            stdio: ['pipe', 'pipe', 'pipe'],
            env: { ...process.env, XDG_STATE_HOME: state },
        });
        let out = Buffer.alloc(0);
        let err = '';
        let initializedAt = 0;
        let explained = false;
        let exiting = false;
        const timer = setTimeout(() => {
            child.kill('SIGKILL');
            reject(new Error(`${python}: no answer within 30 s\n${err}`));
        }, 30_000);
        child.stderr.on('data', (data) => (err += data));
        child.stdout.on('data', (data) => {
            out = Buffer.concat([out, data]);
            if (!initializedAt && out.includes('"capabilities"')) {
                initializedAt = Date.now();
                if (!out.includes('verify.runNow')) {
                    reject(new Error(`${python}: the server does not advertise verify.runNow`));
                }
                child.stdin.write(frame({ method: 'initialized', params: {} }));
                child.stdin.write(
                    frame({
                        id: 2,
                        method: 'workspace/executeCommand',
                        params: { command: 'verify.explain', arguments: [] },
                    }),
                );
            }
            if (!explained && /"source":\s*"project-file"/.test(out.toString())) {
                explained = true;
                child.stdin.write(frame({ id: 3, method: 'shutdown' }));
            }
            if (explained && /"id":\s*3/.test(out.toString()) && !exiting) {
                exiting = true;
                child.stdin.write(frame({ method: 'exit' }));
                child.stdin.end();
            }
        });
        child.on('error', (error) => reject(new Error(`${python}: ${error.message}`)));
        child.on('exit', (code) => {
            clearTimeout(timer);
            rmSync(folder, { recursive: true, force: true });
            rmSync(state, { recursive: true, force: true });
            if (!initializedAt) {
                reject(new Error(`${python}: exited ${code} before answering initialize\n${err}`));
            } else if (!explained || code !== 0 || err.includes('Traceback')) {
                reject(new Error(`${python}: explained=${explained}, exit ${code}\n${err}`));
            } else {
                resolve(`${python}: initialize answered in ${initializedAt - started} ms, exit ${code}`);
            }
        });
        child.stdin.write(
            frame({
                id: 1,
                method: 'initialize',
                params: {
                    processId: process.pid,
                    rootUri: null,
                    capabilities: {},
                    workspaceFolders: [{ uri: pathToFileURL(folder).href, name: 'smoke' }],
                    initializationOptions: { verify: {}, workspaceTrusted: false },
                },
            }),
        );
    });
}

let failed = false;
for (const python of pythons) {
    try {
        console.log(await smoke(python));
    } catch (error) {
        failed = true;
        console.error(String(error instanceof Error ? error.message : error));
    }
}
process.exit(failed ? 1 : 0);
