/**
 * Whether a recorded call is allowed by a Role's rules, the way the RBAC authorizer decides
 * (Kubernetes docs, "Using RBAC Authorization"): some rule lists the call's API group, its
 * resource (`pods`, or `pods/status` for a subresource; `*` matches all), its verb, and — when
 * the rule names resources — the object's name. List, watch and create never carry a name, so
 * a rule with `resourceNames` does not allow them.
 */

export interface PolicyRule {
  apiGroups?: string[]
  resources?: string[]
  verbs: string[]
  resourceNames?: string[]
}

export interface AuthorizedCall {
  verb: string
  group: string
  resource: string
  subresource?: string
  name?: string
}

export function allowedBy(rules: PolicyRule[], call: AuthorizedCall): boolean {
  const resource = call.subresource ? `${call.resource}/${call.subresource}` : call.resource
  return rules.some((rule) => {
    const groups = rule.apiGroups ?? []
    const resources = rule.resources ?? []
    if (!groups.includes('*') && !groups.includes(call.group)) return false
    if (!resources.includes('*') && !resources.includes(resource)) return false
    if (!rule.verbs.includes('*') && !rule.verbs.includes(call.verb)) return false
    if (rule.resourceNames && rule.resourceNames.length > 0)
      return call.name !== undefined && rule.resourceNames.includes(call.name)
    return true
  })
}
