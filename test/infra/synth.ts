import type { Stack } from 'aws-cdk-lib';

import type { Synthesized } from '../../infra/synth.ts';

export { synthesize, type Synthesized } from '../../infra/synth.ts';

export function logicalId(stack: Stack, construct: { node: { defaultChild?: unknown } }): string {
  return stack.getLogicalId(construct.node.defaultChild as never);
}

export type Resource = { Type: string; Properties: Record<string, any> };

/** The resources of a synthesized template: those of one type, and every action a role is granted on one resource. */
export class TemplateResources {
  readonly resources: Record<string, Resource>;
  constructor(readonly synth: Synthesized) {
    this.resources = synth.template.toJSON().Resources as Record<string, Resource>;
  }

  ofType(type: string): [string, Resource][] {
    return Object.entries(this.resources).filter(([, r]) => r.Type === type);
  }

  idOf(construct: { node: { defaultChild?: unknown } }): string {
    return logicalId(this.synth.stack, construct);
  }

  /** By the role's and the resource's logical ids. */
  actionsOn(roleId: string, resourceId: string): string[] {
    const actions = new Set<string>();
    for (const [, policy] of this.ofType('AWS::IAM::Policy')) {
      if (!policy.Properties.Roles.some((r: any) => r.Ref === roleId)) continue;
      for (const statement of policy.Properties.PolicyDocument.Statement) {
        if (JSON.stringify(statement.Resource).includes(`"${resourceId}"`)) [statement.Action].flat().forEach((a: string) => actions.add(a));
      }
    }
    return [...actions].sort();
  }
}
