import { readdirSync, readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The programs written against the typed client (examples/) use its types as generated: no `as`
 * cast, no `<T>` assertion, no non-null `!`, no `any`. Were one needed, the documents would not
 * type a client naturally (issue 23), and this fails before a reviewer has to find it.
 */
function escapes(file: string, text = readFileSync(file, 'utf8')): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    const kind =
      ts.isAsExpression(node) && !(ts.isTypeReferenceNode(node.type) && node.type.getText() === 'const')
        ? 'as cast'
        : ts.isTypeAssertionExpression(node)
          ? 'type assertion'
          : ts.isNonNullExpression(node)
            ? 'non-null assertion'
            : node.kind === ts.SyntaxKind.AnyKeyword
              ? 'any'
              : undefined;
    if (kind) found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${kind}: ${node.getText().slice(0, 80)}`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the programs written against the typed client (examples/)', () => {
  const files = readdirSync('examples')
    .filter((name) => name.endsWith('.ts'))
    .map((name) => `examples/${name}`);

  it('exist: the day in the life and the README lines', () => {
    expect(files).toEqual(expect.arrayContaining(['examples/day-in-the-life.ts', 'examples/readme.ts']));
  });

  it('have no cast, no type assertion, no non-null assertion and no any', () => {
    expect(files.flatMap((file) => escapes(file))).toEqual([]);
  });

  it('would be caught with one (the walk sees each kind, and lets `as const` be)', () => {
    const probe = 'const a = 1 as unknown as string; const b = <number>(a as any); const c = [1][0]!; const d = [1] as const;';
    expect(escapes('probe.ts', probe).map((line) => line.split(' ').slice(1, 3).join(' '))).toEqual([
      'as cast:',
      'as cast:',
      'type assertion:',
      'as cast:',
      'any: any',
      'non-null assertion:',
    ]);
  });
});
