import { activate, deactivate } from '../src/extension';
import { LanguageClient } from './mocks/languageclient';
import { mock } from './mocks/vscode';

export const EXTENSION_PATH = '/ext/lsp-verify';

/** Lets the client's promise chain (probe, start) settle. */
export async function settle(): Promise<void> {
    for (let i = 0; i < 10; i += 1) {
        await new Promise((resolve) => setImmediate(resolve));
    }
}

/**
 * Activates the extension as VS Code would, with the interpreter check answering `problem`
 * (undefined: the interpreter is fine), and waits until the client has started.
 */
export async function activated(): Promise<{ subscriptions: { dispose(): unknown }[] }> {
    const context = { extensionPath: EXTENSION_PATH, subscriptions: [] as { dispose(): unknown }[] };
    activate(context as never);
    await settle();
    return context;
}

export async function shutdown(context: { subscriptions: { dispose(): unknown }[] }): Promise<void> {
    await deactivate();
    for (const subscription of context.subscriptions) {
        subscription.dispose();
    }
}

export function lastClient(): LanguageClient {
    return LanguageClient.last;
}

export { mock };
