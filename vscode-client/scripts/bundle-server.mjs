// Puts the server (lsp_verify from the repository) and its pure-Python dependencies into
// bundled/libs, so the .vsix needs nothing but a Python 3.9+.
//
// PYTHON: a Python with pip (default python3). Reruns are offline: when bundled/libs already
// holds exactly these requirements and this lsp_verify, only lsp_verify is copied again.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const client = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const source = path.join(client, '..', 'lsp_verify');
const libs = path.join(client, 'bundled', 'libs');
const requirements = path.join(client, 'bundled', 'requirements.txt');
const stamp = path.join(libs, '.requirements.sha256');
const python = process.env.PYTHON || 'python3';

const wanted = createHash('sha256').update(readFileSync(requirements)).digest('hex');
const have = existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() : '';

if (have !== wanted) {
    rmSync(libs, { recursive: true, force: true });
    mkdirSync(libs, { recursive: true });
    // Pure wheels for the oldest supported Python: the same folder serves 3.9 to the newest.
    execFileSync(
        python,
        [
            '-m',
            'pip',
            'install',
            '--quiet',
            '--disable-pip-version-check',
            '--no-compile',
            '--target',
            libs,
            '--no-deps',
            '--only-binary=:all:',
            '--python-version',
            '3.9',
            '--implementation',
            'py',
            '--abi',
            'none',
            '--platform',
            'any',
            '-r',
            requirements,
        ],
        { stdio: 'inherit' },
    );
    rmSync(path.join(libs, 'bin'), { recursive: true, force: true });
    writeFileSync(stamp, `${wanted}\n`);
}

const target = path.join(libs, 'lsp_verify');
rmSync(target, { recursive: true, force: true });
cpSync(source, target, {
    recursive: true,
    filter: (from) => {
        const name = path.basename(from);
        return name !== '__pycache__' && !/\.py[cod]$/.test(name);
    },
});
const count = readdirSync(target, { recursive: true }).length;
console.log(
    `bundled lsp_verify (${count} files) and ${
        readFileSync(requirements, 'utf8')
            .split('\n')
            .filter((l) => /^[a-z]/i.test(l)).length
    } packages into bundled/libs`,
);
