import type { Stack } from 'aws-cdk-lib';

export { synthesize, type Synthesized } from '../../infra/synth.ts';

export function logicalId(stack: Stack, construct: { node: { defaultChild?: unknown } }): string {
  return stack.getLogicalId(construct.node.defaultChild as never);
}
