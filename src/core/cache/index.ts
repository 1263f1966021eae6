/** The git cache (DESIGN.md §5.1): node-local bare repositories sandboxes borrow from. */
export {addCache, evictCache, fetchCaches, maintainCaches, openCache, parseInterval, runCacheAgent} from './cache.js'
