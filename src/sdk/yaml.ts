/**
 * yaml's `parse` and `stringify`, for modules that import yaml only when they need it
 * (`await import('../sdk/yaml.js')`): yaml is CommonJS, and the bundle's dynamic import of an
 * inlined CommonJS package gives its default export only, while this module's static import
 * gives the named functions from source and from the bundle alike.
 */
export {parse, stringify} from 'yaml'
