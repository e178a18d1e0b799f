import { runAuthSuite } from '../helpers/auth-suite.ts';
import { backends } from '../helpers/storage.ts';

for (const backend of backends()) runAuthSuite(backend);
