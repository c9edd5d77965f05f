/** The block reader (src/sstable/block.ts) against the InternalIterator contract. */
import { iteratorContract } from './iterator-contract.js';
import { blockIteratorOf } from './sources.js';

iteratorContract('BlockIterator', blockIteratorOf);
