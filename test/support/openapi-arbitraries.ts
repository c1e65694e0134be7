// fast-check arbitraries generated from an OpenAPI 3.1 document's JSON Schemas, for fuzzing the HTTP interface:
// values the schema allows (with known good values mixed in by name) and values near or outside it (a character
// changed in a pattern's match, bounds plus or minus one, wrong types, missing required and extra members,
// unicode, long strings).
import fc from 'fast-check';

export type JsonSchema = Record<string, unknown>;

/** Values known to mean something to the service (a registered agent's id, a live session's token), by field name. */
export type Examples = Readonly<Record<string, readonly unknown[]>>;

const REF_PREFIX = '#/components/schemas/';
/** fast-check's regex generator has no lookaheads: a generated value may then miss the lookahead (the validator says so). */
const LOOKAROUND = /\(\?[=!](?:[^()\\]|\\.)*\)/g;
const MAX_STRING = 40;

/** Text a caller might type: ASCII, any unicode (astral planes and combining marks included), control characters. */
const anyText = (maxLength: number) =>
  fc.oneof(
    fc.string({ maxLength }),
    fc.string({ unit: 'grapheme', maxLength }),
    fc.string({ unit: 'binary', maxLength }),
    fc.constantFrom('', ' ', '\u0000', '\u202e', '😀', '𝕏', 'null', 'undefined', '-1', '0', '1e309', '%', '..', '\\', '"', '<script>'),
  );

/** A string edited in one place: a character dropped, added, replaced by another or by unicode, or its case swapped. */
function nearMiss(base: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc
    .tuple(
      base,
      fc.nat(),
      fc.constantFrom('drop', 'add', 'replace', 'unicode', 'case', 'pad', 'double') as fc.Arbitrary<string>,
      fc.string({ minLength: 1, maxLength: 1 }),
    )
    .map(([text, at, edit, char]) => {
      const i = text.length === 0 ? 0 : at % text.length;
      switch (edit) {
        case 'drop':
          return text.slice(0, i) + text.slice(i + 1);
        case 'add':
          return text.slice(0, i) + char + text.slice(i);
        case 'replace':
          return text.slice(0, i) + char + text.slice(i + 1);
        case 'unicode':
          return `${text.slice(0, i)}é${text.slice(i + 1)}`;
        case 'case':
          return (
            text.slice(0, i) +
            (text[i] === text[i]?.toUpperCase() ? (text[i]?.toLowerCase() ?? '') : (text[i]?.toUpperCase() ?? '')) +
            text.slice(i + 1)
          );
        case 'pad':
          return ` ${text}`;
        default:
          return text + text;
      }
    });
}

/** Values of another JSON type than `schema` allows (or any JSON when it allows anything). */
const otherJson = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 2 ** 53, -(2 ** 63), '', 'x', [], {}, [1], { a: 1 }),
  fc.jsonValue({ maxDepth: 2 }),
);

export class SchemaArbitraries {
  constructor(
    private readonly components: Record<string, JsonSchema>,
    private readonly examples: Examples = {},
  ) {}

  resolve(schema: JsonSchema): JsonSchema {
    const ref = schema['$ref'];
    if (typeof ref !== 'string') return schema;
    if (!ref.startsWith(REF_PREFIX)) throw new Error(`unsupported $ref ${ref}`);
    const target = this.components[ref.slice(REF_PREFIX.length)];
    if (!target) throw new Error(`no component ${ref}`);
    const { $ref: _, ...siblings } = schema;
    return this.resolve({ ...target, ...siblings });
  }

  /** Anything for this field: mostly allowed values (known ones first), often near misses and other types. */
  any(schema: JsonSchema, name?: string, options: { maxString?: number } = {}): fc.Arbitrary<unknown> {
    const known = name !== undefined ? this.examples[name] : undefined;
    return fc.oneof(
      ...(known && known.length > 0 ? [{ arbitrary: fc.constantFrom(...known), weight: 3 }] : []),
      { arbitrary: this.valid(schema, 0, options), weight: 4 },
      { arbitrary: this.invalid(schema, options), weight: 3 },
    );
  }

  /** Values the schema allows (a lookahead of a pattern aside). */
  valid(raw: JsonSchema, depth = 0, options: { maxString?: number } = {}): fc.Arbitrary<unknown> {
    const schema = this.resolve(raw);
    const maxString = options.maxString ?? MAX_STRING;
    if ('const' in schema) return fc.constant(schema['const']);
    if (Array.isArray(schema['enum'])) return fc.constantFrom(...(schema['enum'] as unknown[]));
    for (const key of ['anyOf', 'oneOf'] as const) {
      const options_ = schema[key];
      if (Array.isArray(options_)) return fc.oneof(...(options_ as JsonSchema[]).map((option) => this.valid({ ...option }, depth + 1, options)));
    }
    const type = schema['type'];
    if (Array.isArray(type)) return fc.oneof(...(type as string[]).map((t) => this.valid({ ...schema, type: t }, depth, options)));
    switch (type) {
      case 'string':
        return this.validString(schema, maxString);
      case 'integer':
      case 'number':
        return this.validNumber(schema);
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return this.validArray(schema, depth, options);
      case 'object':
        return this.validObject(schema, depth, options);
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  }

  private validString(schema: JsonSchema, maxString: number): fc.Arbitrary<string> {
    const minLength = (schema['minLength'] as number | undefined) ?? 0;
    const maxLength = Math.max(minLength, Math.min((schema['maxLength'] as number | undefined) ?? maxString, maxString));
    const pattern = schema['pattern'];
    if (typeof pattern !== 'string') return fc.string({ minLength, maxLength });
    const full = new RegExp(pattern, 'u');
    const generated = fc.stringMatching(new RegExp(pattern.replace(LOOKAROUND, '')));
    // one-case variants too: a pattern that allows either case (hex, addresses) is then matched by a typical value
    return fc.oneof(
      generated,
      generated.map((text) => (full.test(text.toLowerCase()) ? text.toLowerCase() : text)),
    );
  }

  private validNumber(schema: JsonSchema): fc.Arbitrary<number> {
    const min = Math.max((schema['minimum'] as number | undefined) ?? -(2 ** 40), Number.MIN_SAFE_INTEGER);
    const max = Math.min((schema['maximum'] as number | undefined) ?? 2 ** 40, Number.MAX_SAFE_INTEGER);
    const integers = fc.oneof(
      fc.constantFrom(min, max),
      fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31) }),
      fc.integer({ min, max }),
    );
    return schema['type'] === 'integer' ? integers : fc.oneof(integers, fc.double({ min, max, noNaN: true, noDefaultInfinity: true }));
  }

  private validArray(schema: JsonSchema, depth: number, options: { maxString?: number }): fc.Arbitrary<unknown[]> {
    const prefix = schema['prefixItems'];
    if (Array.isArray(prefix)) return fc.tuple(...(prefix as JsonSchema[]).map((item) => this.valid(item, depth + 1, options)));
    const items = (schema['items'] as JsonSchema | undefined) ?? {};
    const minLength = (schema['minItems'] as number | undefined) ?? 0;
    const maxLength = Math.max(minLength, Math.min((schema['maxItems'] as number | undefined) ?? 3, 3));
    return fc.array(depth > 3 ? fc.jsonValue({ maxDepth: 1 }) : this.valid(items, depth + 1, options), { minLength, maxLength });
  }

  private validObject(schema: JsonSchema, depth: number, options: { maxString?: number }): fc.Arbitrary<Record<string, unknown>> {
    const properties = (schema['properties'] as Record<string, JsonSchema> | undefined) ?? {};
    const required = (schema['required'] as string[] | undefined) ?? [];
    if (Object.keys(properties).length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 });
    const model = Object.fromEntries(
      Object.entries(properties).map(([key, property]) => {
        const known = this.examples[key];
        const value = depth > 3 ? fc.jsonValue({ maxDepth: 1 }) : this.valid(property, depth + 1, options);
        return [key, known && known.length > 0 ? fc.oneof(fc.constantFrom(...known), value) : value];
      }),
    );
    return fc.record(model, { requiredKeys: required.filter((key) => key in model) }) as fc.Arbitrary<Record<string, unknown>>;
  }

  /** Values near or outside the schema: near misses of allowed values, bounds plus or minus one, other types. */
  invalid(raw: JsonSchema, options: { maxString?: number } = {}): fc.Arbitrary<unknown> {
    const schema = this.resolve(raw);
    const maxString = options.maxString ?? MAX_STRING;
    const type = schema['type'];
    const values = Array.isArray(schema['enum']) ? (schema['enum'] as unknown[]) : undefined;
    const near: fc.Arbitrary<unknown>[] = [];
    // near misses of allowed strings: of the enum's strings, else of the pattern's matches (never a filter that may starve)
    const strings = values?.filter((value): value is string => typeof value === 'string') ?? [];
    if (strings.length > 0) near.push(nearMiss(fc.constantFrom(...strings)));
    else if (type === 'string') near.push(nearMiss(this.validString(schema, maxString)));
    if (type === 'string' || strings.length > 0) near.push(anyText(maxString), fc.string({ minLength: 500, maxLength: 2_000 }));
    if (type === 'integer' || type === 'number') {
      const bounds = [schema['minimum'], schema['maximum'], ...(values ?? [])].filter((value): value is number => typeof value === 'number');
      near.push(fc.constantFrom<unknown>(...bounds.flatMap((bound) => [bound - 1, bound + 1, bound + 0.5, String(bound)]), -1, 0, 0.5, 1e21));
    }
    if (type === 'object' || schema['properties']) near.push(this.invalidObject(schema, options));
    if (type === 'array') near.push(fc.array(otherJson, { maxLength: 3 }));
    return fc.oneof(...near, otherJson);
  }

  /** An allowed object with one thing wrong: a required member missing, an extra member, or one member invalid. */
  private invalidObject(schema: JsonSchema, options: { maxString?: number }): fc.Arbitrary<unknown> {
    const properties = (schema['properties'] as Record<string, JsonSchema> | undefined) ?? {};
    const keys = Object.keys(properties);
    const required = (schema['required'] as string[] | undefined) ?? [];
    const base = this.validObject(schema, 1, options);
    const edits: fc.Arbitrary<unknown>[] = [
      fc.tuple(base, fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 1 })).map(([object, key, value]) => ({ ...object, [key]: value })),
    ];
    if (required.length > 0) {
      edits.push(
        fc.tuple(base, fc.constantFrom(...required)).map(([object, key]) => {
          const { [key]: _, ...rest } = object;
          return rest;
        }),
      );
    }
    if (keys.length > 0) {
      edits.push(
        fc
          .constantFrom(...keys)
          .chain((key) => fc.tuple(base, fc.constant(key), this.invalid(properties[key] as JsonSchema, options)))
          .map(([object, key, value]) => ({ ...object, [key]: value })),
      );
    }
    return fc.oneof(...edits);
  }
}
