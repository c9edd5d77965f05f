import fc from 'fast-check';
import { testSeed } from './seed.js';

const seed = testSeed();
fc.configureGlobal({ seed });
if (process.env.SIEVE_SEED !== undefined) console.log(`SIEVE_SEED=${seed}`);
