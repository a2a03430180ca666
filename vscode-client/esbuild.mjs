// Bundles the extension (one file, so the .vsix needs no node_modules) and the e2e driver.
import { build } from 'esbuild';

const common = { bundle: true, platform: 'node', format: 'cjs', logLevel: 'warning', sourcemap: false };

await build({
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    // VS Code's extension host for engines ^1.91 runs Node 20.
    target: 'node20',
    external: ['vscode'],
});

await build({
    ...common,
    entryPoints: ['e2e/run.ts'],
    outfile: 'out/e2e/run.js',
    target: 'node24',
    external: ['playwright-core'],
});
