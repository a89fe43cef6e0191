import { fieldText } from '../../domain/input-error.js'

/** What Ajv reports of one way a value breaks its schema. */
export interface ValidationIssue {
  instancePath: string
  keyword: string
  params: Record<string, unknown>
  message?: string
}

/** `body.password is required`, `query.limit must be <= 1000`: the field (after `location`), then what is wrong with it. */
export function describeValidationIssue(location: readonly (string | number)[], issue: ValidationIssue): string {
  const path = issue.instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))
  let problem = issue.message ?? 'is not valid'
  if (issue.keyword === 'required') {
    path.push(String(issue.params.missingProperty))
    problem = 'is required'
  } else if (issue.keyword === 'additionalProperties') {
    path.push(String(issue.params.additionalProperty))
    problem = 'is not allowed'
  } else if (issue.keyword === 'enum' && Array.isArray(issue.params.allowedValues)) {
    problem = `must be one of ${issue.params.allowedValues.join(', ')}`
  }
  return `${fieldText([...location, ...path]) || 'the record'} ${problem}`
}
