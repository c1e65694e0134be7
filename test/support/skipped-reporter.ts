// Lists every skipped test at the end of a run with the reason its name or its ctx.skip(note) gives, so that a
// machine without Redis, Chromium or the shared reference files says what it did not test and why. vitest's own
// reporters count skipped tests without naming them. A skip with no reason says so, to be given one.
import type { Reporter, TestModule } from 'vitest/node';

const MARK = ' (skipped: ';

/** The name without its "(skipped: reason)" mark (on the test or a describe around it), and the reason. */
function reasonIn(fullName: string): { name: string; reason?: string } {
  const start = fullName.indexOf(MARK);
  if (start < 0) return { name: fullName };
  let depth = 1;
  let end = start + MARK.length;
  for (; end < fullName.length && depth > 0; end++) {
    if (fullName[end] === '(') depth++;
    else if (fullName[end] === ')') depth--;
  }
  return { name: fullName.slice(0, start) + fullName.slice(end), reason: fullName.slice(start + MARK.length, end - 1) };
}

export default class SkippedReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const lines: string[] = [];
    for (const module of modules) {
      for (const test of module.children.allTests('skipped')) {
        const result = test.result();
        const note = result.state === 'skipped' ? result.note : undefined;
        const { name, reason } = reasonIn(test.fullName);
        lines.push(`  ${module.moduleId.replace(`${process.cwd()}/`, '')} > ${name}: ${note ?? reason ?? 'no reason given'}`);
      }
    }
    if (lines.length > 0) console.log(`\n${lines.length} skipped test${lines.length === 1 ? '' : 's'}, and why:\n${lines.join('\n')}\n`);
  }
}
