/** The cluster (DESIGN.md §5.2): install, credentials, repositories. */
export {clusterInstall, clusterStatus} from './cluster.js'
export type {ClusterInstallResult} from './cluster.js'
export {listCredentials, removeCredential, setCredential} from './credentials.js'
export {addClusterRepos, listClusterRepos, removeClusterRepos} from './repos.js'
