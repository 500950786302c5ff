// `npm run docs:models`: writes docs/models.md from the registry.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { modelsMarkdown } from './models-table';

writeFileSync(path.resolve(__dirname, '..', '..', 'docs', 'models.md'), modelsMarkdown());
