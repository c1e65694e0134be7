// Finds an object key that a JSON text repeats. JSON.parse keeps the last of them, other parsers keep the first or
// refuse: a body the proxy checks one way could be read another way upstream. The proxy forwards its caller's bytes,
// so it refuses such a body rather than guess which reading the upstream takes.
//
// A scan of a text JSON.parse already accepted: only strings (keys decoded, so "a" and "\u0061" are one key) and the
// structural characters matter; numbers, literals and whitespace are passed over.

export interface DuplicateKey {
  key: string;
  /** Where the object is: "" at the top level, else like params[0].sender. */
  path: string;
}

interface Frame {
  keys?: Set<string>;
  /** The object's current key, or the array's current index. */
  at: string | number;
  expectingKey: boolean;
}

const pathOf = (frames: readonly Frame[]): string =>
  frames
    .slice(0, -1)
    .map((frame) => (typeof frame.at === 'number' ? `[${frame.at}]` : `.${frame.at}`))
    .join('')
    .replace(/^\./, '');

/** The first repeated key of `text` (valid JSON), or undefined. */
export function findDuplicateKey(text: string): DuplicateKey | undefined {
  const frames: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    const top = frames.at(-1);
    if (char === '{') frames.push({ keys: new Set(), at: '', expectingKey: true });
    else if (char === '[') frames.push({ at: 0, expectingKey: false });
    else if (char === '}' || char === ']') frames.pop();
    else if (char === ',' && top) {
      if (top.keys) top.expectingKey = true;
      else top.at = (top.at as number) + 1;
    } else if (char === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (top?.keys && top.expectingKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) return { key, path: pathOf(frames) };
        top.keys.add(key);
        top.at = key;
        top.expectingKey = false;
      }
      i = end;
    }
  }
  return undefined;
}
