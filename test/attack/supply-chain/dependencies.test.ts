import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The functions ship with exactly the runtime dependencies they import, at locked versions:
 * nothing declared that no function uses, nothing used that is not declared, every version exact,
 * and package-lock.json and node_modules agreeing with package.json.
 */
const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
  lockfileVersion: number;
  packages: Record<string, { version?: string; dependencies?: Record<string, string>; devDependencies?: Record<string, string>; dev?: boolean }>;
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** Packages a file imports at run time (type-only imports are erased by the bundler). */
function runtimeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [
    ...text.matchAll(/^\s*import\s+(?!type\s)(?:[\s\S]*?\sfrom\s+)?['"]([^'"]+)['"]/gm),
    ...text.matchAll(/^\s*export\s+(?!type\s)[\s\S]*?\sfrom\s+['"]([^'"]+)['"]/gm),
    ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
    ...text.matchAll(/\brequire\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]!);
  return specifiers
    .filter((s) => !s.startsWith('.') && !s.startsWith('#') && !s.startsWith('node:'))
    .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!));
}

describe('runtime dependencies', () => {
  const imported = new Set(sourceFiles('functions').flatMap(runtimeImports));

  it('are exactly the packages the functions import', () => {
    expect([...imported].sort()).toEqual(Object.keys(manifest.dependencies).sort());
  });

  it('import no Node built-in without the node: prefix (so none is mistaken for a package)', () => {
    const builtins = ['crypto', 'fs', 'path', 'http', 'https', 'url', 'util', 'stream', 'os', 'events', 'buffer'];
    expect([...imported].filter((name) => builtins.includes(name))).toEqual([]);
  });

  it('and dev dependencies are pinned to exact versions', () => {
    const ranges = Object.entries({ ...manifest.dependencies, ...manifest.devDependencies }).filter(
      ([, version]) => !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version),
    );
    expect(ranges).toEqual([]);
  });

  it('are locked: package-lock.json matches package.json, and node_modules matches the lock', () => {
    expect(lock.lockfileVersion).toBeGreaterThanOrEqual(2);
    const root = lock.packages['']!;
    expect(root.dependencies).toEqual(manifest.dependencies);
    expect(root.devDependencies).toEqual(manifest.devDependencies);
    for (const [name, version] of Object.entries({ ...manifest.dependencies, ...manifest.devDependencies })) {
      const locked = lock.packages[`node_modules/${name}`];
      expect(locked?.version, name).toBe(version);
      const installed = JSON.parse(readFileSync(join('node_modules', name, 'package.json'), 'utf8')).version;
      expect(installed, name).toBe(version);
    }
    // Runtime packages are not marked dev-only in the lock (they would be left out of a production install).
    for (const name of Object.keys(manifest.dependencies)) expect(lock.packages[`node_modules/${name}`]?.dev, name).toBeUndefined();
  });
});
