import { beforeEach } from 'vitest';

import { LanguageClient } from './mocks/languageclient';
import { mock } from './mocks/vscode';

beforeEach(() => {
    mock.reset();
    LanguageClient.instances = [];
    LanguageClient.failStart = undefined;
});
