/**
 * `npx tsx scripts/shape.ts [dir]`: the code's shape for reviews and closing notes: lines
 * per feature folder of shared/, the largest files, and the longest functions of shared/,
 * api/ and workers/ (counted by the TypeScript parser, comments and blank lines included).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = process.argv[2] ?? process.cwd();

function files(dir: string): string[] {
  const full = join(root, dir);
  return readdirSync(full).flatMap((name) => {
    const path = join(full, name);
    if (statSync(path).isDirectory()) return files(relative(root, path));
    return name.endsWith('.ts') ? [relative(root, path)] : [];
  });
}

const lines = (path: string) => readFileSync(join(root, path), 'utf8').split('\n').length - 1;
const all = ['shared', 'api', 'workers'].flatMap(files);

const features = new Map<string, number>();
for (const f of all.filter((f) => f.startsWith('shared/') && f.split('/').length > 2)) {
  const feature = f.split('/')[1]!;
  features.set(feature, (features.get(feature) ?? 0) + lines(f));
}
console.log('## Lines per feature (shared/<feature>/)');
for (const [name, n] of [...features].sort((a, b) => b[1] - a[1])) console.log(`${String(n).padStart(6)}  ${name}`);

console.log('\n## Largest files');
for (const f of all.sort((a, b) => lines(b) - lines(a)).slice(0, 12)) console.log(`${String(lines(f)).padStart(6)}  ${f}`);

interface Fn {
  name: string;
  file: string;
  lines: number;
}
const fns: Fn[] = [];
for (const file of all) {
  const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node, owner: string) => {
    let name = owner;
    if (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) name = node.name?.getText(source) ?? owner;
    else if (ts.isVariableDeclaration(node) && node.initializer && (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer))) {
      name = node.name.getText(source);
    }
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      // Top-level route handlers are anonymous: name them by their first line.
      fns.push({ name: name || node.getText(source).split('\n')[0]!.slice(0, 50), file, lines: end - start + 1 });
    }
    ts.forEachChild(node, (child) => visit(child, name));
  };
  visit(source, '');
}
// A nested callback inherits its owner's name: keep each owner's outermost (longest) span.
const longest = new Map<string, Fn>();
for (const f of fns) if ((longest.get(`${f.file}:${f.name}`)?.lines ?? 0) < f.lines) longest.set(`${f.file}:${f.name}`, f);
console.log('\n## Longest functions');
for (const f of [...longest.values()].sort((a, b) => b.lines - a.lines).slice(0, 12)) console.log(`${String(f.lines).padStart(6)}  ${f.name} (${f.file})`);
