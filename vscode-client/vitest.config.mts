import { fileURLToPath } from 'node:url';

import { defineConfig } from 'vitest/config';

export default defineConfig({
    resolve: {
        // `vscode` exists only inside VS Code's extension host, and languageclient needs it.
        alias: {
            'vscode-languageclient/node': fileURLToPath(new URL('./test/mocks/languageclient.ts', import.meta.url)),
            vscode: fileURLToPath(new URL('./test/mocks/vscode.ts', import.meta.url)),
        },
    },
    test: {
        include: ['test/**/*.test.ts'],
        environment: 'node',
        restoreMocks: true,
        setupFiles: ['test/setup.ts'],
    },
});
