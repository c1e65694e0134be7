// Regular expressions for bounded decimal integers, so that a schema's pattern is its whole rule: the OpenAPI
// document shows the same bound the validator applies (a refinement would be invisible to it).

const range = (low: number, high: number): string => (low === high ? String(low) : `[${low}-${high}]`);
const anyDigits = (count: number): string => (count === 1 ? '[0-9]' : `[0-9]{${count}}`);

/** Strings of exactly `max.length` digits that are <= max (leading zeros count as digits). */
function sameLengthAtMost(max: string): string {
  const [first, rest] = [Number(max[0]), max.slice(1)];
  if (rest === '') return range(0, first);
  const tail = `${first}${sameLengthAtMost(rest)}`;
  return first === 0 ? tail : `(?:${range(0, first - 1)}${anyDigits(rest.length)}|${tail})`;
}

/**
 * `^...$` source for canonical decimal integers (no sign, no leading zeros) from `min` (0 or 1) up to `max`.
 * e.g. max 250, min 1: ^(?:[1-9][0-9]{0,1}|1[0-9]{2}|2(?:[0-4][0-9]|50))$
 */
export function decimalPattern(max: bigint, min: 0n | 1n): string {
  if (max < min) throw new Error('decimalPattern: max below min');
  const digits = max.toString();
  const alternatives = min === 0n ? ['0'] : [];
  const first = Number(digits[0]);
  if (digits.length === 1) {
    if (first >= 1) alternatives.push(range(1, first));
  } else {
    alternatives.push(digits.length === 2 ? '[1-9]' : `[1-9][0-9]{0,${digits.length - 2}}`);
    const rest = digits.slice(1);
    if (first > 1) alternatives.push(`${range(1, first - 1)}${anyDigits(rest.length)}`);
    alternatives.push(`${first}${sameLengthAtMost(rest)}`);
  }
  return `^(?:${alternatives.join('|')})$`;
}
