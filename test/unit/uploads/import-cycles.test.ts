/**
 * No runtime import cycle in shared/ (issue 24: storage/index.ts and its stores imported
 * each other). Imports are read with the TypeScript parser; `import type` / `export type`
 * do not count (erased), anything else does (verbatimModuleSyntax keeps it, even
 * `import { type A }`, which still loads the module).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { expect } from 'chai';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '../../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The local files a module loads when it runs. */
function runtimeImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  for (const node of source.statements) {
    let spec: ts.Expression | undefined;
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) spec = node.moduleSpecifier;
    if (ts.isExportDeclaration(node) && !node.isTypeOnly) spec = node.moduleSpecifier;
    if (!spec || !ts.isStringLiteral(spec) || !spec.text.startsWith('.')) continue;
    out.push(resolve(dirname(file), spec.text.replace(/\.js$/, '.ts')));
  }
  return out;
}

/** Every cycle found by a depth-first walk, each as the list of files around it. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const done = new Set<string>();
  const stack: string[] = [];
  const visit = (file: string) => {
    const at = stack.indexOf(file);
    if (at >= 0) {
      found.push(stack.slice(at).map((f) => relative(ROOT, f)));
      return;
    }
    if (done.has(file) || !graph.has(file)) return;
    stack.push(file);
    for (const next of graph.get(file)!) visit(next);
    stack.pop();
    done.add(file);
  };
  for (const f of graph.keys()) visit(f);
  return found;
}

describe('imports: no runtime cycle in shared/', () => {
  it('the walk finds a cycle when there is one', () => {
    const graph = new Map([
      [join(ROOT, 'a.ts'), [join(ROOT, 'b.ts')]],
      [join(ROOT, 'b.ts'), [join(ROOT, 'c.ts')]],
      [join(ROOT, 'c.ts'), [join(ROOT, 'a.ts')]],
    ]);
    expect(cycles(graph)).to.deep.equal([['a.ts', 'b.ts', 'c.ts']]);
  });

  it('reads runtime imports and skips type-only ones', () => {
    const local = runtimeImports(join(ROOT, 'shared/uploads/storage/local.ts'));
    expect(local).to.include(join(ROOT, 'shared/uploads/storage/types.ts'));
    const index = runtimeImports(join(ROOT, 'shared/uploads/storage/index.ts'));
    expect(index).to.include(join(ROOT, 'shared/uploads/storage/local.ts'));
  });

  it('shared/ has none', () => {
    const files = sourceFiles(join(ROOT, 'shared'));
    expect(cycles(new Map(files.map((f) => [f, runtimeImports(f)])))).to.deep.equal([]);
  });
});
